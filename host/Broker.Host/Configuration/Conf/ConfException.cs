namespace Broker.Host.Configuration.Conf;

/// <summary>
/// A configuration file could not be read: a syntax error, a bad include, an unknown variable, a
/// number out of range. <see cref="Exception.Message"/> is <c>file:line:column: reason</c>
/// (<c>line:column: reason</c> for unnamed text), the form compilers use, so editors can jump to it.
/// </summary>
/// <remarks>
/// Errors inside an included file are reported at the <c>include</c> line, with the included file's
/// own <c>file:line:column: reason</c> in the reason, and the inner exception kept as
/// <see cref="Exception.InnerException"/>.
/// </remarks>
internal sealed class ConfException : Exception
{
    /// <summary>Creates an exception for a problem at <paramref name="position"/>.</summary>
    public ConfException(ConfPosition position, string reason, Exception? innerException = null)
        : base($"{position}: {reason}", innerException)
    {
        Position = position;
        Reason = reason;
    }

    /// <summary>Creates an exception for a problem that has no position, such as a file that cannot be opened.</summary>
    public ConfException(string reason, Exception? innerException = null)
        : base(reason, innerException) => Reason = reason;

    /// <summary>Where the problem is, when it has a place in a file.</summary>
    public ConfPosition? Position { get; }

    /// <summary>The message without the position.</summary>
    public string Reason { get; }
}
