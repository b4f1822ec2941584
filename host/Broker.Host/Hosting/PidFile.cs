using System.Globalization;

namespace Broker.Host.Hosting;

/// <summary>
/// The <c>-P</c> / <c>pid_file</c> file: the process id as decimal text without a newline, as nats-server writes it,
/// created when the host starts and deleted when it exits (nats-server leaves it behind; a stale pid file would make
/// <c>--signal</c> hit whichever process later gets that id).
/// </summary>
internal sealed class PidFile : IDisposable
{
    private readonly string path;

    private PidFile(string path) => this.path = path;

    /// <summary>Writes the file.</summary>
    /// <param name="path">Where; relative to the current directory.</param>
    /// <returns>The file, deleted on dispose.</returns>
    /// <exception cref="IOException">The file cannot be written.</exception>
    /// <exception cref="UnauthorizedAccessException">The file cannot be written.</exception>
    public static PidFile Write(string path)
    {
        var full = Path.GetFullPath(path);
        File.WriteAllText(full, Environment.ProcessId.ToString(CultureInfo.InvariantCulture));
        return new PidFile(full);
    }

    /// <summary>Reads a process id from a pid file, or <see langword="null"/> when the text is not a number.</summary>
    /// <param name="text">The file's text.</param>
    /// <returns>The id.</returns>
    public static int? Parse(string text) =>
        int.TryParse(text.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var pid) && pid > 0 ? pid : null;

    public void Dispose()
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Exiting anyway; a pid file left behind is what nats-server always does.
        }
    }
}
