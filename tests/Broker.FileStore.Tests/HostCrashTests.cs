using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using Xunit.Abstractions;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Broker.FileStore.Tests;

/// <summary>
/// The real host (<c>dotnet Broker.Host.dll -js -sd DIR</c>) killed with SIGKILL during heavy asynchronous publishing
/// to a <c>storage: file</c> stream, restarted on the same directory: every acknowledged message is there, by sequence
/// and content, and no sequence is handed out twice.
/// </summary>
public sealed class HostCrashTests(ITestOutputHelper output) : IDisposable
{
    private readonly string storeDirectory = Path.Combine(Path.GetTempPath(), "host-crash-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        try
        {
            Directory.Delete(storeDirectory, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }

    [Fact(Timeout = 180_000)]
    public async Task Every_acknowledged_message_survives_kill_9_of_the_host()
    {
        var acked = new ConcurrentDictionary<ulong, (string Subject, string Payload)>();
        long maxAssigned = 0;
        var port = Ports.GetFreePort();
        var host = StartHost(port);
        try
        {
            await using var connection = await ConnectAsync(port);
            var js = new NatsJSContext(connection);
            await js.CreateStreamAsync(new StreamConfig("CRASH", ["crash.>"]) { Storage = StreamConfigStorage.File });

            using var stop = new CancellationTokenSource();
            var publishers = Enumerable.Range(0, 128).Select(id => Task.Run(async () =>
            {
                for (var n = 0; !stop.IsCancellationRequested; n++)
                {
                    var subject = $"crash.{id}.{n % 5}";
                    var payload = $"{id}:{n}:" + new string((char)('a' + (n % 26)), 64 + (n % 64));
                    try
                    {
                        var ack = await js.PublishAsync(subject, Encoding.UTF8.GetBytes(payload), cancellationToken: stop.Token);
                        if (ack.Error is null && !ack.Duplicate)
                        {
                            acked[ack.Seq] = (subject, payload);
                            InterlockedMax(ref maxAssigned, (long)ack.Seq);
                        }
                    }
                    catch (Exception)
                    {
                        return;
                    }
                }
            })).ToArray();

            // Publish hard for a while, then kill the process without any chance to flush or close.
            var deadline = DateTime.UtcNow.AddSeconds(20);
            while (acked.Count < 20_000 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(50);
            }

            host.Kill();
            await host.WaitForExitAsync();
            output.WriteLine($"killed after {acked.Count} acknowledged publishes (last sequence {Interlocked.Read(ref maxAssigned)})");
            await stop.CancelAsync();
            await Task.WhenAll(publishers);
        }
        finally
        {
            host.Dispose();
        }

        Assert.True(acked.Count > 1000, $"only {acked.Count} publishes were acknowledged before the kill");
        var restarted = StartHost(port);
        try
        {
            await using var connection = await ConnectAsync(port);
            var js = new NatsJSContext(connection);
            var stream = await js.GetStreamAsync("CRASH");
            Assert.True(stream.Info.State.LastSeq >= (ulong)maxAssigned);
            var missing = new List<ulong>();
            foreach (var (sequence, (subject, payload)) in acked.OrderBy(p => p.Key))
            {
                try
                {
                    var message = await stream.GetAsync(new StreamMsgGetRequest { Seq = sequence });
                    Assert.Equal(subject, message.Message!.Subject);
                    Assert.Equal(payload, Encoding.UTF8.GetString(message.Message.Data.Span));
                }
                catch (NatsJSApiException)
                {
                    missing.Add(sequence);
                }
            }

            Assert.True(missing.Count == 0, $"{missing.Count} of {acked.Count} acknowledged messages lost, first {string.Join(",", missing.Take(10))}");
            var next = await js.PublishAsync("crash.after", "after");
            Assert.True(next.Seq > (ulong)maxAssigned);
        }
        finally
        {
            restarted.Kill();
            restarted.Dispose();
        }
    }

    private Process StartHost(int port)
    {
        var configuration = AppContext.BaseDirectory.Contains($"{Path.DirectorySeparatorChar}Release{Path.DirectorySeparatorChar}", StringComparison.Ordinal) ? "Release" : "Debug";
        var assembly = RepositoryPaths.Combine("host", "Broker.Host", "bin", configuration, "net10.0", "Broker.Host.dll");
        Assert.True(File.Exists(assembly), $"{assembly} is not built");
        var start = new ProcessStartInfo(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in new[] { assembly, "-a", "127.0.0.1", "-p", port.ToString(System.Globalization.CultureInfo.InvariantCulture), "-js", "-sd", storeDirectory })
        {
            start.ArgumentList.Add(argument);
        }

        var process = Process.Start(start)!;
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, _) => { };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static async Task<NatsConnection> ConnectAsync(int port)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var connection = new NatsConnection(new NatsOpts { Url = $"nats://127.0.0.1:{port}", RequestTimeout = TimeSpan.FromSeconds(10), MaxReconnectRetry = 0 });
            try
            {
                await connection.ConnectAsync();
                await new NatsJSContext(connection).GetAccountInfoAsync();
                return connection;
            }
            catch (Exception) when (DateTime.UtcNow < deadline)
            {
                await connection.DisposeAsync();
                await Task.Delay(200);
            }
        }
    }

    private static void InterlockedMax(ref long target, long value)
    {
        var current = Interlocked.Read(ref target);
        while (value > current)
        {
            var seen = Interlocked.CompareExchange(ref target, value, current);
            if (seen == current)
            {
                return;
            }

            current = seen;
        }
    }
}
