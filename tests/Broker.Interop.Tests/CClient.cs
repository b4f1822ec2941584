namespace Broker.Interop.Tests;

/// <summary>
/// The libnats program of <c>tests/interop/c</c> (<c>interop.c</c> with <c>kvcross.c</c>), compiled once per test
/// class into a temporary folder (gcc with <c>pkg-config --cflags --libs libnats</c>; scripts/test.sh installs
/// libnats-dev) and deleted after.
/// </summary>
public sealed class CClient : IAsyncLifetime
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(45);

    private readonly string directory = Path.Combine(Path.GetTempPath(), "broker-interop-c-" + Guid.NewGuid().ToString("N"));

    public string BinaryPath => Path.Combine(directory, "interop");

    public async Task InitializeAsync()
    {
        System.IO.Directory.CreateDirectory(directory);
        var flags = await ExternalProcess.RunAsync("pkg-config", ["--cflags", "--libs", "libnats"], TimeSpan.FromSeconds(30));
        Assert.True(flags.ExitCode == 0, "libnats is not installed (scripts/test.sh installs libnats-dev):" + Environment.NewLine + flags);
        string[] arguments =
        [
            "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1", "-o", BinaryPath,
            RepositoryPaths.Combine("tests", "interop", "c", "interop.c"), RepositoryPaths.Combine("tests", "interop", "c", "kvcross.c"),
            .. flags.Output.Split(' ', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries),
        ];
        var compile = await ExternalProcess.RunAsync("gcc", arguments, TimeSpan.FromSeconds(120));
        Assert.True(compile.ExitCode == 0, "compiling the C client failed:" + Environment.NewLine + compile);
    }

    public async Task<ProcessResult> RunAsync(params string[] arguments)
    {
        await using var process = Start(arguments);
        return await process.WaitForExitAsync(Timeout);
    }

    public ExternalProcess Start(params string[] arguments) => ExternalProcess.Start(BinaryPath, arguments);

    public Task DisposeAsync()
    {
        System.IO.Directory.Delete(directory, recursive: true);
        return Task.CompletedTask;
    }
}
