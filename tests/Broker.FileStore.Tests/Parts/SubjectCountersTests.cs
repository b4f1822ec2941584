using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore.Internal;

namespace Broker.FileStore.Tests.Parts;

/// <summary><see cref="SubjectCounters"/>: counts, first and last per subject through removals, the rebuild, the filtered queries.</summary>
public sealed class SubjectCountersTests
{
    private static byte[] U(string text) => Encoding.UTF8.GetBytes(text);

    private static (ulong Count, ulong First, ulong Last) Entry(SubjectCounters subjects, string subject)
    {
        var index = subjects.Find(U(subject));
        Assert.True(index >= 0, subject + " is not counted");
        return (subjects[index].Count, subjects.ResolveFirst(index), subjects[index].Last);
    }

    /// <summary>A at 1, 3, 4, 6; B at 2, 5.</summary>
    private static StoreParts Sample()
    {
        var parts = new StoreParts();
        foreach (var subject in new[] { "S.A", "S.B", "S.A", "S.A", "S.B", "S.A" })
        {
            parts.Append(subject, "x");
        }

        return parts;
    }

    [Fact]
    public void Counts_first_and_last_follow_appends_and_removals()
    {
        var parts = Sample();
        var subjects = parts.Subjects;
        Assert.Equal(2, subjects.Count);
        Assert.Equal((4UL, 1UL, 6UL), Entry(subjects, "S.A"));
        Assert.Equal((2UL, 2UL, 5UL), Entry(subjects, "S.B"));

        // The first removed: a lower bound until looked up, then the next one of that subject.
        parts.Ledger.RemoveLive(1, RemovalReason.Api);
        var a = subjects.Find(U("S.A"));
        Assert.True(subjects[a].FirstStale);
        Assert.Equal(3UL, subjects.ResolveFirst(a));
        Assert.False(subjects[a].FirstStale);

        // The last removed: scanned back at once.
        parts.Ledger.RemoveLive(6, RemovalReason.Api);
        Assert.Equal((2UL, 3UL, 4UL), Entry(subjects, "S.A"));

        // One left: first and last are that one; none left: the subject goes.
        parts.Ledger.RemoveLive(5, RemovalReason.Api);
        Assert.Equal((1UL, 2UL, 2UL), Entry(subjects, "S.B"));
        parts.Ledger.RemoveLive(2, RemovalReason.Api);
        Assert.True(subjects.Find(U("S.B")) < 0);
        Assert.Equal(1, subjects.Count);
    }

    [Fact]
    public void A_rebuild_restores_the_counters_from_the_live_messages()
    {
        var parts = Sample();
        parts.Ledger.RemoveLive(3, RemovalReason.Api);
        parts.Subjects.MarkSuspect();
        parts.Subjects.Clear();
        Assert.True(parts.Subjects.Suspect);
        Assert.Equal(0, parts.Subjects.Count);

        parts.Subjects.Rebuild(parts.Ledger.First);
        Assert.False(parts.Subjects.Suspect);
        Assert.Equal((3UL, 1UL, 6UL), Entry(parts.Subjects, "S.A"));
        Assert.Equal((2UL, 2UL, 5UL), Entry(parts.Subjects, "S.B"));
    }

    [Fact]
    public void Filtered_queries_count_whole_subjects_and_scan_one_straddling_the_start()
    {
        var subjects = Sample().Subjects;

        // A straddles 3 (1 is before it): scanned, 3, 4 and 6.
        Assert.Equal(new SubjectState(3, 3, 6), subjects.MatchingState(3, U("S.A")));
        Assert.Equal(new SubjectState(4, 3, 6), subjects.MatchingState(3, U("S.*")));
        Assert.Equal(new SubjectState(0, 0, 0), subjects.MatchingState(7, U("S.A")));

        Assert.True(subjects.ScanBounds(U("S.B"), 3, out var lowest, out var stop));
        Assert.Equal((3UL, 5UL), (lowest, stop));
        Assert.True(subjects.ScanBounds(U("S.*"), 1, out lowest, out stop));
        Assert.Equal((1UL, 6UL), (lowest, stop));
        Assert.False(subjects.ScanBounds(U("S.C"), 1, out _, out _));

        Assert.Equal(6UL, subjects.LastMatching(U("S.*")));
        Assert.Equal(5UL, subjects.LastMatching(U("S.B")));
        Assert.Equal(0UL, subjects.LastMatching(U("S.C")));
        Assert.Equal(1UL, subjects.CountLastPerSubject(6, U("S.*")));
        Assert.Equal(2UL, subjects.CountLastPerSubject(5, U(">")));

        var snapshot = subjects.Snapshot(U("S.*"));
        Assert.Equal(new SubjectState(4, 1, 6), snapshot["S.A"]);
        Assert.Equal(new SubjectState(2, 2, 5), snapshot["S.B"]);
    }
}
