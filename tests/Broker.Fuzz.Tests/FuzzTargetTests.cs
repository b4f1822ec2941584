using Broker.Fuzz.Support;

namespace Broker.Fuzz.Tests;

/// <summary>
/// Runs each fuzz target in-process: its seed corpus (fuzz/corpus/&lt;target&gt;), every input that once broke it
/// (fuzz/regressions/&lt;target&gt;, kept as regression tests), and a deterministic mutation loop. A failure names the
/// input, so it can be replayed with <c>dotnet Broker.Fuzz.dll &lt;target&gt; &lt;file&gt;</c>.
/// </summary>
public sealed class FuzzTargetTests
{
    private static readonly TimeSpan MutationTime = TimeSpan.FromSeconds(3);

    // One input of these small parsers taking seconds is a hang, whatever the machine.
    private static readonly TimeSpan HangLimit = TimeSpan.FromSeconds(2);

    public static TheoryData<string> Targets() => [.. FuzzTargets.All.Select(t => t.Name)];

    [Fact(Timeout = 10_000)]
    public async Task Every_target_has_a_seed_corpus()
    {
        await Task.Yield();
        foreach (var target in FuzzTargets.All)
        {
            Assert.True(Corpus.Files("corpus", target.Name).Count > 0, $"fuzz/corpus/{target.Name} is empty");
        }

        // A regression folder must belong to a target, or its inputs would silently never run.
        foreach (var folder in Directory.EnumerateDirectories(Corpus.Folder("regressions")))
        {
            Assert.Contains(Path.GetFileName(folder), FuzzTargets.All.Select(t => t.Name));
        }
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Targets))]
    public async Task Seed_corpus_and_regressions_pass(string name)
    {
        var target = FuzzTargets.Find(name)!;
        var files = Corpus.Files("corpus", name).Concat(Corpus.Files("regressions", name)).ToList();
        await Task.Run(() =>
        {
            foreach (var file in files)
            {
                var started = DateTime.UtcNow;
                try
                {
                    target.Run(File.ReadAllBytes(file));
                }
                catch (Exception ex)
                {
                    Assert.Fail($"{name} failed on {file}: {ex}");
                }

                Assert.True(DateTime.UtcNow - started < HangLimit, $"{name} hung on {file}");
            }
        });
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Targets))]
    public async Task Mutations_of_the_corpus_pass(string name)
    {
        var target = FuzzTargets.Find(name)!;
        var corpus = Corpus.Files("corpus", name).Concat(Corpus.Files("regressions", name)).Select(File.ReadAllBytes).ToList();
        var (executions, failure) = await Task.Run(() => MutationRunner.Run(target, corpus, seed: 14, MutationTime, HangLimit));
        Assert.True(
            failure is null,
            failure is null ? string.Empty : $"{name} failed after {executions} executions on input {Convert.ToHexString(failure.Input)}:\n{failure.Error}");
        Assert.True(executions > 0);
    }

    private static class Corpus
    {
        public static string Folder(string kind)
        {
            // The test runs from tests/Broker.Fuzz.Tests/bin/<configuration>/<tfm>; the corpora live in fuzz/.
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !Directory.Exists(Path.Combine(directory.FullName, "fuzz", "corpus")))
            {
                directory = directory.Parent;
            }

            Assert.NotNull(directory);
            return Path.Combine(directory.FullName, "fuzz", kind);
        }

        public static IReadOnlyList<string> Files(string kind, string target)
        {
            var folder = Path.Combine(Folder(kind), target);
            return Directory.Exists(folder) ? [.. Directory.EnumerateFiles(folder).Order(StringComparer.Ordinal)] : [];
        }
    }
}
