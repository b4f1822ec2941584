using System.Text.RegularExpressions;
using Broker.Host.Configuration.ConfigFile;
using Broker.Host.Configuration.ConfigFile.Internal;
using Broker.TestKit;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// The list of warned keys in docs/configuration.md is the whole truth: it names exactly the keys the host accepts with
/// a warning, each under the feature its warning names, and each of them is warned about when written.
/// </summary>
public sealed partial class WarnedSettingsTests
{
    [Fact]
    public void The_documented_list_is_exactly_the_warned_keys()
    {
        var documented = Documented();

        Assert.Equal(
            IgnoredFeatures.FeatureOfKey.Select(kv => $"{kv.Key} -> {kv.Value}").Order(StringComparer.Ordinal),
            documented.Select(kv => $"{kv.Key} -> {kv.Value}").Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Every_documented_key_is_warned_about_by_its_feature()
    {
        foreach (var (key, feature) in Documented())
        {
            var mapping = ConfMappingTests.Map($"{key}: {{}}", null);

            var notice = Assert.Single(mapping.Diagnostics);
            Assert.Equal(ConfDiagnosticKind.Unsupported, notice.Kind);
            Assert.Contains(feature, notice.Message, StringComparison.Ordinal);
            Assert.Contains($"\"{key}\"", notice.Message, StringComparison.Ordinal);
        }
    }

    // "| Feature | `a`, `b` |" rows between the warned-settings markers.
    private static Dictionary<string, string> Documented()
    {
        var doc = File.ReadAllText(RepositoryPaths.Combine("docs", "configuration.md"));
        var start = doc.IndexOf("<!-- warned-settings -->", StringComparison.Ordinal);
        var end = doc.IndexOf("<!-- /warned-settings -->", StringComparison.Ordinal);
        Assert.True(start >= 0 && end > start, "docs/configuration.md has no warned-settings table");
        var keys = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (Match row in Row().Matches(doc[start..end]))
        {
            foreach (Match key in Key().Matches(row.Groups["keys"].Value))
            {
                keys.Add(key.Groups["key"].Value, row.Groups["feature"].Value.Trim());
            }
        }

        Assert.NotEmpty(keys);
        return keys;
    }

    [GeneratedRegex(@"^\| (?<feature>[^|`]+) \| (?<keys>`[^|]+) \|$", RegexOptions.Multiline)]
    private static partial Regex Row();

    [GeneratedRegex("`(?<key>[a-z_]+)`")]
    private static partial Regex Key();
}
