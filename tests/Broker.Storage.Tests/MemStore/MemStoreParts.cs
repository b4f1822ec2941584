using System.Buffers;
using System.Text;
using Broker.Storage.MemStore.Internal;

namespace Broker.Storage.Tests.MemStore;

/// <summary>A message log and its subject index wired as the memory store wires them, with helpers to append.</summary>
internal sealed class MemStoreParts
{
    public MemStoreParts()
    {
        Subjects = new SubjectIndex(Log);
    }

    public MessageLog Log { get; } = new();

    public SubjectIndex Subjects { get; }

    /// <summary>Appends a message as the store does (subject first, then the log); returns its sequence.</summary>
    public ulong Append(string subject, string payload = "x", long? timestamp = null)
    {
        var bytes = Encoding.UTF8.GetBytes(subject);
        var data = new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload));
        var size = (ulong)(bytes.Length + (int)data.Length + 16);
        var sequence = Log.Last + 1;
        var record = Subjects.Add(bytes, Subjects.Find(bytes), sequence);
        Log.Append(sequence, timestamp ?? Log.NextTimestamp(), record, ReadOnlySequence<byte>.Empty, data, size);
        return sequence;
    }

    public SubjectRecord Record(string subject) => Subjects.Find(Encoding.UTF8.GetBytes(subject)) ?? throw new InvalidOperationException("no subject " + subject);
}
