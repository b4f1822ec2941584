namespace Broker.Compare.Report;

/// <summary>docs/reliability.md, where the soak and the storm each own one <c>##</c> section that their runs rewrite.</summary>
internal static class ReliabilityDoc
{
    /// <summary>
    /// Replaces (or appends) the section of <paramref name="path"/> whose heading is <paramref name="section"/>'s first
    /// line; returns the path. Other sections belong to other runs (or to people) and are kept as they are.
    /// </summary>
    public static string WriteSection(string path, string section)
    {
        ArgumentNullException.ThrowIfNull(section);
        var heading = section.Split('\n')[0];
        var existing = File.Exists(path) ? File.ReadAllText(path) : "# Reliability\n\nFigures of issue 14: what the broker survives, each with the command that produced it.\n";
        var start = existing.IndexOf("\n" + heading + "\n", StringComparison.Ordinal);
        string updated;
        if (start < 0)
        {
            updated = existing.TrimEnd('\n') + "\n\n" + section;
        }
        else
        {
            var next = existing.IndexOf("\n## ", start + heading.Length + 2, StringComparison.Ordinal);
            updated = existing[..(start + 1)] + section + (next < 0 ? string.Empty : "\n" + existing[(next + 1)..]);
        }

        File.WriteAllText(path, updated);
        return path;
    }
}
