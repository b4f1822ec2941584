using System.Globalization;
using System.Text.RegularExpressions;
using Broker.TestKit;

namespace Broker.Core.Tests.Api;

/// <summary>
/// The event id registry (docs/logging.md) holds for every <c>LoggerMessage</c> in the repository: each logging class
/// has a range, its ids fall inside it, and no id is used twice.
/// </summary>
public sealed partial class LogEventIdTests
{
    [Fact]
    public void Every_event_id_is_unique_and_inside_its_class_range()
    {
        var ranges = Registry();
        var problems = new List<string>();
        var seen = new Dictionary<int, string>();
        foreach (var file in SourceFiles())
        {
            var ids = LoggerMessageId().Matches(File.ReadAllText(file)).Select(m => int.Parse(m.Groups["id"].Value, CultureInfo.InvariantCulture)).ToList();
            if (ids.Count == 0)
            {
                continue;
            }

            var relative = Path.GetRelativePath(RepositoryPaths.Root, file).Replace('\\', '/');
            if (!ranges.TryGetValue(relative, out var range))
            {
                problems.Add($"{relative} logs but has no range in docs/logging.md");
                continue;
            }

            foreach (var id in ids)
            {
                if (id < range.First || id > range.Last)
                {
                    problems.Add($"{relative}: event id {id} is outside its range {range.First}-{range.Last}");
                }

                if (!seen.TryAdd(id, relative))
                {
                    problems.Add($"{relative}: event id {id} is also used by {seen[id]}");
                }
            }
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
        Assert.NotEmpty(seen);
    }

    // "| 100-199 | `core/.../ClientLog.cs` | ..." rows of the table.
    private static Dictionary<string, (int First, int Last)> Registry()
    {
        var ranges = new Dictionary<string, (int, int)>(StringComparer.Ordinal);
        foreach (Match row in RegistryRow().Matches(File.ReadAllText(RepositoryPaths.Combine("docs", "logging.md"))))
        {
            ranges.Add(row.Groups["file"].Value, (int.Parse(row.Groups["first"].Value, CultureInfo.InvariantCulture), int.Parse(row.Groups["last"].Value, CultureInfo.InvariantCulture)));
        }

        Assert.NotEmpty(ranges);
        return ranges;
    }

    private static IEnumerable<string> SourceFiles() =>
        Directory.EnumerateFiles(RepositoryPaths.Root, "*.cs", SearchOption.AllDirectories)
            .Where(f => !f.Contains($"{Path.DirectorySeparatorChar}bin{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !f.Contains($"{Path.DirectorySeparatorChar}obj{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !f.Contains($"{Path.DirectorySeparatorChar}node_modules{Path.DirectorySeparatorChar}", StringComparison.Ordinal)
                && !f.Contains($"{Path.DirectorySeparatorChar}.", StringComparison.Ordinal));

    [GeneratedRegex(@"\[LoggerMessage\((?:EventId\s*=\s*)?(?<id>\d+)")]
    private static partial Regex LoggerMessageId();

    [GeneratedRegex(@"^\|\s*(?<first>\d+)-(?<last>\d+)\s*\|\s*`(?<file>[^`]+\.cs)`", RegexOptions.Multiline)]
    private static partial Regex RegistryRow();
}
