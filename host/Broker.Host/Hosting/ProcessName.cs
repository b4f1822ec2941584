namespace Broker.Host.Hosting;

/// <summary>
/// The name this process was started as, which names the ports file (<c>&lt;name&gt;_&lt;pid&gt;.ports</c>) as
/// nats-server names it after <c>filepath.Base(os.Args[0])</c>.
/// </summary>
internal static class ProcessName
{
    /// <summary>
    /// argv[0] without its folder, so an apphost or a symbolic link named <c>nats-server</c> (or
    /// <c>exec -a nats-server dotnet Broker.Host.dll</c>) is <c>nats-server</c>; when started as
    /// <c>dotnet Broker.Host.dll</c>, argv[0] is the dotnet launcher and the entry assembly's name is used instead.
    /// </summary>
    /// <returns>The name.</returns>
    public static string Detect() =>
        // .NET reports the entry assembly here, whatever launched it.
        Launcher() ?? Path.GetFileNameWithoutExtension(Environment.GetCommandLineArgs()[0]);

    /// <summary>
    /// argv[0] without its folder when it is not the dotnet launcher (an apphost such as the .NET tool's
    /// <c>broker-server</c>, or a link named <c>nats-server</c>); <see langword="null"/> when started as
    /// <c>dotnet Broker.Host.dll</c> or when argv[0] cannot be read.
    /// </summary>
    /// <returns>The name, or <see langword="null"/>.</returns>
    public static string? Launcher()
    {
        if (ReadArgumentZero() is { } first)
        {
            var name = Path.GetFileName(first);
            if (name.Length > 0 && name is not "dotnet" and not "dotnet.exe")
            {
                return name;
            }
        }

        return null;
    }

    // The real argv[0]; .NET's own argument list starts with the entry assembly instead. Linux only.
    private static string? ReadArgumentZero()
    {
        try
        {
            var commandLine = File.ReadAllBytes("/proc/self/cmdline");
            var end = Array.IndexOf(commandLine, (byte)0);
            return end <= 0 ? null : System.Text.Encoding.UTF8.GetString(commandLine, 0, end);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            return null;
        }
    }
}
