namespace Broker.Host.Configuration.Conf;

/// <summary>
/// Reads nats-server configuration files (<c>nats-server.conf</c> syntax) into a tree of
/// <see cref="ConfValue"/>s with positions, resolving <c>$variables</c> and <c>include</c>s.
/// </summary>
/// <remarks>
/// <para>Follows nats-server's conf/parse.go: a key defined earlier in the same or an enclosing map
/// answers <c>$name</c> (case-sensitively), else the environment variable, whose text is parsed as a
/// value. Includes are read relative to the including file and merged where they appear; an included
/// file does not see the includer's keys.</para>
/// <para>Stricter than nats-server where it silently drops data: an integer with an unknown suffix
/// (<c>1kbb</c>), an integer overflowing with its suffix (<c>8eb</c>), a map key without a value
/// (<c>{ foo }</c>), input ending inside an array or map, and include cycles are errors here.</para>
/// </remarks>
internal sealed partial class ConfParser
{
    private readonly Session session;
    private readonly ConfLexer lexer;
    private readonly string fileName;
    private readonly string baseDirectory;

    // The maps being filled, outermost first: the scopes in which $name is looked up.
    private readonly List<ConfMap> scopes = [];

    private ConfParser(Session session, ConfLexer lexer, string fileName, string baseDirectory)
    {
        this.session = session;
        this.lexer = lexer;
        this.fileName = fileName;
        this.baseDirectory = baseDirectory;
    }

    /// <summary>Reads and parses a configuration file.</summary>
    /// <param name="path">The file; positions name it as given, includes are relative to its folder.</param>
    /// <param name="environment">Looks up environment variables for <c>$name</c>; default <see cref="Environment.GetEnvironmentVariable(string)"/>.</param>
    /// <returns>The document as a map.</returns>
    /// <exception cref="ConfException">The file cannot be read or is not valid.</exception>
    public static ConfMap ParseFile(string path, Func<string, string?>? environment = null)
    {
        ArgumentNullException.ThrowIfNull(path);
        var fullPath = Path.GetFullPath(path);
        var text = ReadConfigFile(path, fullPath);
        var session = new Session(environment ?? Environment.GetEnvironmentVariable);
        session.OpenFiles.Add(fullPath);
        return Parse(session, text, path, Path.GetDirectoryName(fullPath) ?? fullPath);
    }

    /// <summary>Parses configuration text.</summary>
    /// <param name="text">The configuration.</param>
    /// <param name="fileName">Name used in positions and error messages; none by default.</param>
    /// <param name="baseDirectory">Folder that includes are relative to; default the current directory.</param>
    /// <param name="environment">Looks up environment variables for <c>$name</c>; default <see cref="Environment.GetEnvironmentVariable(string)"/>.</param>
    /// <returns>The document as a map.</returns>
    /// <exception cref="ConfException">The text is not valid.</exception>
    public static ConfMap ParseText(string text, string? fileName = null, string? baseDirectory = null, Func<string, string?>? environment = null)
    {
        ArgumentNullException.ThrowIfNull(text);
        var session = new Session(environment ?? Environment.GetEnvironmentVariable);
        return Parse(session, text, fileName ?? string.Empty, Path.GetFullPath(baseDirectory ?? Directory.GetCurrentDirectory()));
    }

    private static ConfMap Parse(Session session, string text, string fileName, string baseDirectory)
    {
        var parser = new ConfParser(session, new ConfLexer(text, fileName), fileName, baseDirectory);
        var root = new ConfMap(new ConfPosition(fileName, 1, 1));
        parser.ParseEntries(root);
        return root;
    }

    // Fills the document map until the end of input.
    private void ParseEntries(ConfMap root)
    {
        scopes.Add(root);
        while (true)
        {
            var token = lexer.Next();
            switch (token.Kind)
            {
                case ConfTokenKind.Eof:
                    scopes.RemoveAt(scopes.Count - 1);
                    return;
                case ConfTokenKind.Key:
                    var valueToken = lexer.Next();
                    if (valueToken.Kind == ConfTokenKind.Eof)
                    {
                        // A '}' closing a JSON-like document after its last value is read as a key.
                        if (token.Text == "}")
                        {
                            continue;
                        }
                        throw new ConfException(token.Position, $"config is invalid: key '{token.Text}' has no value");
                    }
                    root.Set(new ConfEntry(token.Text, token.Position, ParseValue(valueToken)));
                    break;
                case ConfTokenKind.Include:
                    Include(root, token);
                    break;
                default:
                    throw Unexpected(token);
            }
        }
    }

    private static ConfException Unexpected(ConfToken token) => token.Kind == ConfTokenKind.Eof
        ? new ConfException(token.Position, "Unexpected EOF.")
        : new ConfException(token.Position, $"Unexpected {token.Kind} '{token.Text}'.");

    // State shared by a document, the files it includes and the environment variables it reads.
    private sealed class Session(Func<string, string?> environment)
    {
        public Func<string, string?> Environment { get; } = environment;

        // Full paths of the files being parsed, to refuse include cycles.
        public HashSet<string> OpenFiles { get; } = new(OperatingSystem.IsWindows() ? StringComparer.OrdinalIgnoreCase : StringComparer.Ordinal);

        // Environment variables being expanded, to refuse reference cycles.
        public HashSet<string> ExpandingVariables { get; } = new(StringComparer.Ordinal);
    }
}
