namespace Broker.Host.Configuration.Conf;

/// <summary>
/// Where a key, a value or an error sits in a configuration source: the file as it was named
/// (empty for text parsed without a name), a 1-based line and a 1-based column counted in UTF-16
/// characters. Lines are split on <c>'\n'</c> only, as nats-server does.
/// </summary>
/// <remarks>
/// nats-server prints a column that is 0-based on a file's first line and 1-based on the others
/// (it measures from the preceding newline). We are 1-based everywhere, so our columns equal
/// nats-server's except on line 1, where ours are one larger.
/// </remarks>
/// <param name="File">The file name as given to the parser or as joined for an include; empty for unnamed text.</param>
/// <param name="Line">1-based line.</param>
/// <param name="Column">1-based column.</param>
internal readonly record struct ConfPosition(string File, int Line, int Column)
{
    /// <summary>Formats as <c>file:line:column</c>, or <c>line:column</c> when there is no file name.</summary>
    public override string ToString() =>
        File.Length == 0 ? $"{Line}:{Column}" : $"{File}:{Line}:{Column}";
}
