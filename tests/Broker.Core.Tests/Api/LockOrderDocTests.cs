using System.Text.RegularExpressions;
using Broker.TestKit;

namespace Broker.Core.Tests.Api;

/// <summary>
/// docs/locks.md names every lock of the product (core, adapters, storage, host), so its order is the whole truth: each
/// field a <c>lock</c> statement takes, and each semaphore used as a mutex, appears there as <c>`Class.field`</c>.
/// </summary>
public sealed partial class LockOrderDocTests
{
    private static readonly string[] ProductFolders = ["core", "adapters", "storage", "host"];

    [Fact]
    public void Every_lock_is_in_docs_locks_md()
    {
        var doc = File.ReadAllText(RepositoryPaths.Combine("docs", "locks.md"));
        var locks = FindLocks();
        var missing = locks.Where(name => !doc.Contains($"`{name}`", StringComparison.Ordinal)).Order(StringComparer.Ordinal).ToList();

        Assert.True(missing.Count == 0, "not in docs/locks.md: " + string.Join(", ", missing));
        Assert.Contains("MessageStream.gate", locks);
        Assert.Contains("StreamCommitter.ioSync", locks);
    }

    // Class.field of every field locked on or declared as a mutex semaphore; the class is the file's name before its
    // first dot (partial files are named Class.Part.cs).
    private static HashSet<string> FindLocks()
    {
        var files = ProductFolders
            .SelectMany(folder => Directory.EnumerateFiles(RepositoryPaths.Combine(folder), "*.cs", SearchOption.AllDirectories))
            .Where(path => !path.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !path.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal))
            .GroupBy(path => Path.GetFileName(path).Split('.')[0], StringComparer.Ordinal);
        var found = new HashSet<string>(StringComparer.Ordinal);
        foreach (var type in files)
        {
            var text = string.Join('\n', type.Select(File.ReadAllText));
            foreach (Match locked in LockStatement().Matches(text))
            {
                var field = locked.Groups["field"].Value;
                if (Regex.IsMatch(text, $@"(private|protected|internal|public)[^;=(\n]*\s{Regex.Escape(field)}\s*(=|;|\{{)"))
                {
                    found.Add($"{type.Key}.{field}");
                }
            }

            foreach (Match semaphore in MutexSemaphore().Matches(text))
            {
                found.Add($"{type.Key}.{semaphore.Groups["field"].Value}");
            }
        }

        return found;
    }

    [GeneratedRegex(@"(?<![A-Za-z_.])lock \((?:this\.)?(?<field>[A-Za-z_][A-Za-z0-9_]*)\)")]
    private static partial Regex LockStatement();

    [GeneratedRegex(@"SemaphoreSlim (?<field>[A-Za-z_][A-Za-z0-9_]*) = new\(1, 1\)")]
    private static partial Regex MutexSemaphore();
}
