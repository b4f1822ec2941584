using Broker.Abstractions;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// State queries (nats-server <c>State</c>, <c>FilteredState</c>, <c>SubjectsState</c>, <c>NumPending</c>), answered by
/// <see cref="MessageLog"/> and <see cref="SubjectIndex"/> under the lock.
/// </summary>
internal sealed partial class MemoryStreamStore
{
    public StreamState GetState()
    {
        lock (gate)
        {
            return log.State(subjects.Count);
        }
    }

    public IReadOnlyList<ulong> GetDeletedSequences()
    {
        lock (gate)
        {
            return log.DeletedSequences();
        }
    }

    public SubjectState GetFilteredState(ulong start, ReadOnlySpan<byte> filter)
    {
        lock (gate)
        {
            return subjects.FilteredState(start, filter);
        }
    }

    public IReadOnlyDictionary<string, SubjectState> GetSubjectsState(string filter)
    {
        ArgumentNullException.ThrowIfNull(filter);
        var filterBytes = System.Text.Encoding.UTF8.GetBytes(filter);
        lock (gate)
        {
            return subjects.SubjectsState(filterBytes);
        }
    }

    public PendingCount NumPending(ulong start, ReadOnlySpan<byte> filter, bool lastPerSubject)
    {
        lock (gate)
        {
            var pending = lastPerSubject ? subjects.CountLastAtOrAfter(start, filter) : subjects.FilteredState(start, filter).Messages;
            return new PendingCount(pending, log.Last);
        }
    }
}
