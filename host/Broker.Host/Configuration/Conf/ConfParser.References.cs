namespace Broker.Host.Configuration.Conf;

// $variables and include files: the two ways a value or a key comes from somewhere else.
internal sealed partial class ConfParser
{
    // An unquoted "$2a$..." is a bcrypt hash, not a reference, so passwords need no quotes.
    // nats-server checks this exact prefix only (not $2b$ or $2y$).
    private const string BcryptPrefix = "2a$";

    // The key under which an environment variable's text is read, as in nats-server.
    private const string EnvironmentKey = "pk";

    private ConfValue ResolveVariable(ConfToken reference)
    {
        var name = reference.Text;
        if (name.StartsWith(BcryptPrefix, StringComparison.Ordinal))
        {
            return new ConfString("$" + name, reference.Position);
        }

        // Innermost map first; arrays are not scopes. Only keys already assigned are visible.
        for (var i = scopes.Count - 1; i >= 0; i--)
        {
            if (scopes[i].TryGetExactEntry(name, out var entry))
            {
                entry.MarkUsedAsVariable();
                return entry.Value.WithPosition(reference.Position);
            }
        }

        if (!session.ExpandingVariables.Add(name))
        {
            throw new ConfException(reference.Position, $"variable reference cycle for '{name}'");
        }
        try
        {
            var text = session.Environment(name)
                ?? throw new ConfException(reference.Position, $"variable reference for '{name}' can not be found");
            return ParseEnvironmentValue(reference, text).WithPosition(reference.Position);
        }
        finally
        {
            session.ExpandingVariables.Remove(name);
        }
    }

    // The variable's text is read like the value of a key ("pk=" + text in nats-server), in a
    // document of its own: it cannot see this file's keys, but may name other variables.
    private ConfValue ParseEnvironmentValue(ConfToken reference, string text)
    {
        var name = reference.Text;
        var source = "$" + name;
        var parser = new ConfParser(session, new ConfLexer(text, source, valueFirst: true), source, baseDirectory);
        var root = new ConfMap(new ConfPosition(source, 1, 1));
        try
        {
            var first = parser.lexer.Next();
            parser.scopes.Add(root);
            var value = parser.ParseValue(first);
            parser.scopes.Remove(root);
            root.Set(new ConfEntry(EnvironmentKey, first.Position, value));
            // Whatever follows the value must be valid too ("1 2" is not), as in nats-server.
            parser.ParseEntries(root);
        }
        catch (ConfException ex)
        {
            throw new ConfException(reference.Position, $"variable reference for '{name}' could not be parsed: {ex.Reason}", ex);
        }
        return root.TryGetExactEntry(EnvironmentKey, out var entry)
            ? entry.Value
            : throw new ConfException(reference.Position, $"variable reference for '{name}' can not be found");
    }

    // Reads the file named by an include and merges its keys into 'target', in order.
    private void Include(ConfMap target, ConfToken include)
    {
        // Like Go's filepath.Join, a leading separator does not make the path absolute: includes
        // are always relative to the including file's folder.
        var relative = include.Text.TrimStart(Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar);
        var fullPath = Path.GetFullPath(Path.Join(baseDirectory, relative));
        var displayPath = CleanJoin(Path.GetDirectoryName(fileName), relative);
        var prefix = $"error parsing include file '{include.Text}'";

        if (!session.OpenFiles.Add(fullPath))
        {
            throw new ConfException(include.Position, $"{prefix}, include cycle: '{fullPath}' is already being parsed");
        }
        try
        {
            string text;
            try
            {
                text = ReadConfigFile(displayPath, fullPath);
            }
            catch (ConfException ex)
            {
                throw new ConfException(include.Position, $"{prefix}, {ex.Reason}", ex);
            }
            ConfMap included;
            try
            {
                included = Parse(session, text, displayPath, Path.GetDirectoryName(fullPath) ?? baseDirectory);
            }
            catch (ConfException ex)
            {
                throw new ConfException(include.Position, $"{prefix}, {ex.Message}", ex);
            }
            foreach (var entry in included.Entries)
            {
                target.Set(entry);
            }
        }
        finally
        {
            session.OpenFiles.Remove(fullPath);
        }
    }

    // The name an included file goes by in positions: joined to the including file's name and
    // cleaned of "." and ".." the way Go's filepath.Join does, so it reads like nats-server's.
    private static string CleanJoin(string? directory, string relative)
    {
        var joined = string.IsNullOrEmpty(directory) ? relative : Path.Join(directory, relative);
        if (Path.IsPathRooted(joined))
        {
            return Path.GetFullPath(joined);
        }
        var parts = new List<string>();
        foreach (var part in joined.Split([Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar], StringSplitOptions.RemoveEmptyEntries))
        {
            if (part == ".")
            {
                continue;
            }
            if (part == ".." && parts.Count > 0 && parts[^1] != "..")
            {
                parts.RemoveAt(parts.Count - 1);
                continue;
            }
            parts.Add(part);
        }
        return parts.Count == 0 ? "." : string.Join(Path.DirectorySeparatorChar, parts);
    }

    private static string ReadConfigFile(string displayPath, string fullPath)
    {
        try
        {
            return File.ReadAllText(fullPath);
        }
        catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
        {
            throw new ConfException($"error opening config file '{displayPath}': no such file or directory", ex);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            var reason = Directory.Exists(fullPath) ? "is a directory" : ex.Message;
            throw new ConfException($"error opening config file '{displayPath}': {reason}", ex);
        }
    }
}
