using System.Globalization;
using System.Text;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.FileStore.Tests;

/// <summary>
/// Where the real host takes the file store's settings from a nats-server configuration file: nats-server writes
/// <c>cipher</c>, <c>key</c> (<c>ek</c>, <c>encryption_key</c>) and 2.10's <c>sync_interval</c> (<c>sync</c>) inside
/// <c>jetstream { }</c>; the host hands them to the file store plugin, which also reads them from its own
/// <c>filestore { }</c> block. Written in both blocks is an error, not a silent choice.
/// </summary>
public sealed class HostSettingsTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("filestore-settings-").FullName;

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory(Timeout = 60_000)]
    [InlineData("cipher: aes\n  key: s3cr3t")]
    [InlineData("ek: s3cr3t")]
    [InlineData("sync_interval: \"2m\"")]
    [InlineData("sync: always")]
    public async Task File_store_keys_in_the_jetstream_block_are_taken_as_nats_server_takes_them(string keys)
    {
        var (exitCode, output) = await CheckAsync($"jetstream {{\n  store_dir: \"{directory}\"\n  {keys}\n}}\n");

        Assert.True(exitCode == 0, output);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("cipher: rot13", "\"rot13\" is not aes or chachapoly")]
    [InlineData("sync_interval: \"soon\"", "Plugins:FileStore:sync_interval: time: invalid duration \"soon\"")]
    [InlineData("prev_key: old", "prev_key is not served")]
    [InlineData("sync_interval: 2m", "invalid use of field \"sync_interval\": sync_interval should be converted to a duration")]
    public async Task A_bad_file_store_value_in_the_jetstream_block_is_refused_by_the_file_store(string keys, string refusal)
    {
        var (exitCode, output) = await CheckAsync($"jetstream {{\n  store_dir: \"{directory}\"\n  {keys}\n}}\n");

        Assert.Equal(1, exitCode);
        Assert.Contains(refusal, output, StringComparison.Ordinal);
    }

    [Fact(Timeout = 60_000)]
    public async Task The_filestore_block_takes_them()
    {
        var (exitCode, output) = await CheckAsync($"jetstream {{ store_dir: \"{directory}\" }}\nfilestore {{\n  cipher: aes\n  key: s3cr3t\n  sync_interval: 2m\n}}\n");

        Assert.True(exitCode == 0, output);
    }

    [Theory(Timeout = 60_000)]
    [InlineData("jetstream {{ store_dir: \"{0}\", sync_interval: 2m }}\nfilestore {{ sync_interval: always }}\n")]
    [InlineData("filestore {{ key: one }}\njetstream {{ store_dir: \"{0}\", encryption_key: two }}\n")]
    public async Task A_setting_written_in_both_blocks_stops_the_host(string conf)
    {
        var (exitCode, output) = await CheckAsync(string.Format(CultureInfo.InvariantCulture, conf, directory));

        Assert.Equal(1, exitCode);
        Assert.Contains("is written in both the jetstream and the filestore block", output, StringComparison.Ordinal);
    }

    [Theory(Timeout = 120_000)]
    [InlineData(true)]
    [InlineData(false)]
    public async Task A_cipher_and_key_in_the_jetstream_block_encrypt_what_the_store_writes(bool encrypted)
    {
        const string marker = "plain-text-marker-7f3a";
        var store = Path.Combine(directory, "store");
        var port = Ports.GetFreePort();
        var path = Path.Combine(directory, "broker.conf");
        var cipher = encrypted ? "\n  cipher: chachapoly\n  key: s3cr3t" : "";
        await File.WriteAllTextAsync(path, $"jetstream {{\n  store_dir: \"{store}\"{cipher}\n}}\n");
        await using (var host = ExternalProcess.Start(DotnetPath, [HostAssembly, "-c", path, "-a", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture)]))
        {
            await Ports.WaitUntilListeningAsync(port, TimeSpan.FromSeconds(60));
            // The first JetStream request of a just-started host process: at a load average of 40 it went unanswered
            // within the client's default 5 s (the host was still compiling its start-up path), so a longer bound.
            await using var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(30) });
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig("SECRET", ["secret.>"]) { Storage = StreamConfigStorage.File });
            var ack = await js.PublishAsync("secret.one", Encoding.UTF8.GetBytes(marker));
            ack.EnsureSuccess();
        }

        var files = Directory.EnumerateFiles(store, "*", SearchOption.AllDirectories).ToList();
        Assert.NotEmpty(files);
        var found = files.Any(file => Encoding.Latin1.GetString(File.ReadAllBytes(file)).Contains(marker, StringComparison.Ordinal));
        Assert.Equal(!encrypted, found);
    }

    private static string DotnetPath => Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";

    private static string HostAssembly
    {
        get
        {
            var configuration = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Release{Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Release" : "Debug";
            return RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        }
    }

    // -t: the host maps the file, loads the plugins and lets each check its settings, without listening.
    private async Task<(int ExitCode, string Output)> CheckAsync(string conf)
    {
        var path = Path.Combine(directory, "broker.conf");
        await File.WriteAllTextAsync(path, conf);
        var result = await ExternalProcess.RunAsync(DotnetPath, [HostAssembly, "-t", "-c", path], TimeSpan.FromSeconds(50));
        return (result.ExitCode ?? -1, result.Output + result.ErrorText);
    }
}
