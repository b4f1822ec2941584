using Broker.Abstractions;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Streams;

/// <summary>
/// A stream's <c>mirror</c> or <c>sources</c> (nats-server's <c>mset.mirror</c> and <c>mset.sources</c>): one
/// <see cref="SourceLink"/> per origin, started with the stream, where a source resumes found by reading the stream's
/// own messages back (<c>startingSequenceForSources</c>), changed by an update (sources added, removed or refiltered; a
/// mirror cannot change) and reported in stream info.
/// </summary>
/// <remarks><c>sync</c> (a leaf) guards the map of links; a link is called outside it.</remarks>
internal sealed class StreamSources(MessageStream stream) : IAsyncDisposable
{
    private readonly Lock sync = new();
    private readonly Dictionary<string, SourceLink> links = new(StringComparer.Ordinal);
    private SourceLink? mirror;

    /// <summary>The origins of <paramref name="config"/> followed for <paramref name="stream"/>; null when it has none.</summary>
    public static StreamSources? StartFor(MessageStream stream, StreamConfig config)
    {
        if (config.Mirror is null && config.Sources is null)
        {
            return null;
        }

        var sources = new StreamSources(stream);
        sources.Start(config);
        return sources;
    }

    private void Start(StreamConfig config)
    {
        if (config.Mirror is { } origin)
        {
            mirror = new SourceLink(stream, origin, isMirror: true);
            mirror.Start(0);
            return;
        }

        var started = new List<(SourceLink Link, ulong Sequence)>();
        var resume = StartingSequences(config.Sources!, out var lastTime);
        lock (sync)
        {
            foreach (var source in config.Sources!)
            {
                var link = new SourceLink(stream, source, isMirror: false) { ResumeTime = lastTime };
                if (links.TryAdd(source.IndexName, link))
                {
                    started.Add((link, resume.GetValueOrDefault(source.IndexName)));
                }
            }
        }

        foreach (var (link, sequence) in started)
        {
            link.Start(sequence);
        }
    }

    /// <summary>nats-server's update of <c>sources</c>: new ones start where the stream's messages say, refiltered ones restart, removed ones stop.</summary>
    public void Update(StreamConfig config)
    {
        var added = new List<SourceLink>();
        var refiltered = new List<(SourceLink Link, bool Overlap)>();
        var removed = new List<SourceLink>();
        lock (sync)
        {
            var current = new HashSet<string>(links.Keys, StringComparer.Ordinal);
            foreach (var source in config.Sources ?? [])
            {
                var name = source.IndexName;
                if (!links.TryGetValue(name, out var link))
                {
                    link = new SourceLink(stream, source, isMirror: false);
                    links[name] = link;
                    added.Add(link);
                }
                else if (!link.Source.SameFilters(source))
                {
                    refiltered.Add((link, FiltersOverlap(link.Source.Filters(), source.Filters())));
                    link.Source = source;
                }

                current.Remove(name);
            }

            foreach (var name in current)
            {
                removed.Add(links[name]);
                links.Remove(name);
            }
        }

        foreach (var link in added)
        {
            var sequence = StartingSequences([link.Source], out _).GetValueOrDefault(link.Source.IndexName);
            link.Start(sequence);
        }

        foreach (var (link, overlap) in refiltered)
        {
            link.Refilter(overlap);
        }

        foreach (var link in removed)
        {
            _ = link.DisposeAsync().AsTask();
        }
    }

    public StreamSourceInfoModel? MirrorInfo() => mirror?.Info();

    public List<StreamSourceInfoModel>? SourcesInfo()
    {
        lock (sync)
        {
            return links.Count == 0 ? null : [.. links.Values.Select(static link => link.Info())];
        }
    }

    /// <summary>Stops following every origin.</summary>
    public async ValueTask DisposeAsync()
    {
        SourceLink[] all;
        lock (sync)
        {
            all = [.. links.Values];
            links.Clear();
        }

        if (mirror is not null)
        {
            await mirror.DisposeAsync().ConfigureAwait(false);
        }

        foreach (var link in all)
        {
            await link.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <summary>
    /// nats-server <c>startingSequenceForSources</c>: reading the stream's messages back from the last, the origin
    /// sequence in the newest <c>Nats-Stream-Source</c> header of each source; <paramref name="lastTime"/> the last
    /// message's time, where a source whose messages are gone resumes.
    /// </summary>
    private Dictionary<string, ulong> StartingSequences(List<StreamSourceConfig> sources, out long lastTime)
    {
        var found = new Dictionary<string, ulong>(StringComparer.Ordinal);
        var state = stream.Store.GetState();
        lastTime = state.LastTimestamp;
        if (state.Messages == 0)
        {
            return found;
        }

        var wanted = new HashSet<string>(sources.Select(static s => s.IndexName), StringComparer.Ordinal);
        var message = new StoredMessage();
        for (var sequence = state.LastSequence; sequence >= state.FirstSequence && sequence > 0 && found.Count < wanted.Count; sequence--)
        {
            if (stream.Store.Load(sequence, message) != LoadStatus.Found || message.Headers.IsEmpty
                || !NatsHeaderBlock.TryGetValue(message.Headers.Span, SourceMessages.StreamSourceHeader, out var value)
                || !SourceMessages.TryParseSourceHeader(value, out var name, out var originSequence))
            {
                continue;
            }

            if (wanted.Contains(name))
            {
                found.TryAdd(name, originSequence);
            }
        }

        return found;
    }

    private static bool FiltersOverlap(List<string> old, List<string> updated)
    {
        if (old.Count == 0 || updated.Count == 0)
        {
            return true;
        }

        return old.Exists(first =>
        {
            var a = System.Text.Encoding.UTF8.GetBytes(first);
            return updated.Exists(second =>
            {
                var b = System.Text.Encoding.UTF8.GetBytes(second);
                return Subjects.IsSubsetOf(a, b) || Subjects.IsSubsetOf(b, a);
            });
        });
    }
}
