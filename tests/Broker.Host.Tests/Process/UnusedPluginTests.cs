using Broker.TestKit;

namespace Broker.Host.Tests.Process;

/// <summary>
/// Through the real executable: a plugin whose activation keys the configuration does not use is not loaded at all (its
/// assembly is never mapped into the process), a configured one is, and a plugin that declares no keys (the sample, as
/// a third party's) is loaded as before.
/// </summary>
public sealed class UnusedPluginTests : IDisposable
{
    private readonly string storeDirectory = Directory.CreateTempSubdirectory("broker-unused-plugins-").FullName;

    public void Dispose() => Directory.Delete(storeDirectory, recursive: true);

    [Fact(Timeout = 60_000)]
    public async Task The_memory_store_and_tls_are_loaded_only_when_configured()
    {
        await using (var bare = await HostProcess.StartReadyAsync(["-D"]))
        {
            Assert.Contains(bare.Lines, l => l.Contains("Plugin MemStore not loaded", StringComparison.Ordinal));
            Assert.Contains(bare.Lines, l => l.Contains("Plugin Tls not loaded", StringComparison.Ordinal));
            Assert.Contains(bare.Lines, l => l.Contains("Plugin Line 1.2.0.0 configured its services", StringComparison.Ordinal));
            if (MappedFiles(bare.Id) is { } maps)
            {
                Assert.DoesNotContain("Broker.Storage.MemStore.dll", maps, StringComparison.Ordinal);
                Assert.DoesNotContain("Broker.Adapters.Tls.dll", maps, StringComparison.Ordinal);
                Assert.Contains("Broker.Samples.LinePlugin.dll", maps, StringComparison.Ordinal);
            }
        }

        await using var jetStream = await HostProcess.StartReadyAsync(["-D", "-js", "-sd", storeDirectory]);
        Assert.Contains(jetStream.Lines, l => l.Contains("Plugin MemStore", StringComparison.Ordinal) && l.Contains("configured its services", StringComparison.Ordinal));
        Assert.Contains(jetStream.Lines, l => l.Contains("Plugin Tls not loaded", StringComparison.Ordinal));
        if (MappedFiles(jetStream.Id) is { } mapped)
        {
            Assert.Contains("Broker.Storage.MemStore.dll", mapped, StringComparison.Ordinal);
        }
    }

    // The files the process has mapped: every assembly the runtime loaded (Linux; elsewhere the log lines above decide).
    private static string? MappedFiles(int pid) => OperatingSystem.IsLinux() ? File.ReadAllText($"/proc/{pid}/maps") : null;
}
