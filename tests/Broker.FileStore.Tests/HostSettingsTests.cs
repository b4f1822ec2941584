using System.Diagnostics;

namespace Broker.FileStore.Tests;

/// <summary>
/// Where the real host takes the file store's settings from a nats-server configuration file: nats-server writes
/// <c>cipher</c>, <c>key</c> and <c>sync_interval</c> inside <c>jetstream { }</c>; here the file store plugin owns them
/// in its <c>filestore { }</c> block, and the JetStream plugin refuses them in its block rather than ignore them.
/// </summary>
public sealed class HostSettingsTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("filestore-settings-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory(Timeout = 60_000)]
    [InlineData("cipher: aes\n  key: s3cr3t")]
    [InlineData("sync_interval: 2m")]
    public async Task File_store_keys_in_the_jetstream_block_stop_the_host_with_a_pointer_to_its_block(string keys)
    {
        var key = keys.Split(':')[0];
        var (exitCode, output) = await CheckAsync($"jetstream {{\n  store_dir: \"{directory}\"\n  {keys}\n}}\n");

        Assert.Equal(1, exitCode);
        Assert.Contains($"the file store reads {key} from its own block: write it as filestore {{ {key}: ... }}", output, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_filestore_block_takes_them()
    {
        var (exitCode, output) = await CheckAsync($"jetstream {{ store_dir: \"{directory}\" }}\nfilestore {{\n  cipher: aes\n  key: s3cr3t\n  sync_interval: 2m\n}}\n");

        Assert.True(exitCode == 0, output);
    }

    // -t: the host maps the file, loads the plugins and lets each check its settings, without listening.
    private async Task<(int ExitCode, string Output)> CheckAsync(string conf)
    {
        var path = Path.Combine(directory, "broker.conf");
        await File.WriteAllTextAsync(path, conf);
        var configuration = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Release{Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Release" : "Debug";
        var assembly = RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        var start = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in new[] { assembly, "-t", "-c", path })
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        await process.WaitForExitAsync();
        return (process.ExitCode, await stdout + await stderr);
    }
}
