using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Format;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.FileStore.Tests.Parts;

/// <summary>
/// The file store's collaborators wired as <see cref="FileStreamStore"/> wires them, on a <see cref="SimulatedDisk"/>,
/// without the store: tests drive one collaborator and look at the others (and at the disk).
/// </summary>
internal sealed class StoreParts
{
    public const string Root = "/sim";
    public const string Msgs = "/sim/msgs";

    public StoreParts(SimulatedDisk? disk = null, long blockSize = 4096, TimeSpan? syncInterval = null, StreamStoreConfig? config = null)
    {
        Disk = disk ?? NewDisk();
        Config = config ?? new StreamStoreConfig { Name = "S", Directory = Root, Subjects = ["S.>"] };
        var codec = new RecordCodec();
        Blocks = new BlockSet(Disk, Msgs, blockSize, null, codec);
        Subjects = new SubjectCounters(Blocks);
        Ledger = new StreamLedger(Blocks, Subjects, codec, NullLogger.Instance, "S");
        Blocks.MessageLost = Ledger.LoseMessage;
        Reservation = new SequenceReservation(Disk, Msgs);
        Checkpoint = new StreamCheckpoint(Disk, Msgs, null, Blocks, Subjects, Ledger);
        Committer = new StreamCommitter(Sync, Disk, Msgs, Blocks, Ledger, Reservation, Checkpoint, syncInterval, NullLogger.Instance, "S");
        Maintenance = new StoreMaintenance(Sync, Disk, Msgs, new FileStoreOptions(), () => Config, Blocks, Ledger, Subjects, Checkpoint, Committer, () => { });
    }

    public SimulatedDisk Disk { get; }

    public object Sync { get; } = new();

    public StreamStoreConfig Config { get; set; }

    public BlockSet Blocks { get; }

    public SubjectCounters Subjects { get; }

    public StreamLedger Ledger { get; }

    public SequenceReservation Reservation { get; }

    public StreamCheckpoint Checkpoint { get; }

    public StreamCommitter Committer { get; }

    public StoreMaintenance Maintenance { get; }

    public static SimulatedDisk NewDisk()
    {
        var disk = new SimulatedDisk(Root);
        DurableDirectory.Create(disk, Msgs);
        return disk;
    }

    /// <summary>Appends a message (under the state lock, telling the committer, as the store's append does).</summary>
    public ulong Append(string subject, string payload)
    {
        var subjectBytes = Encoding.UTF8.GetBytes(subject);
        var payloadBytes = Encoding.UTF8.GetBytes(payload);
        var accounted = RecordFormat.AccountedSize(subjectBytes.Length, 0, payloadBytes.Length);
        var recordLength = RecordFormat.MessageLength(subjectBytes.Length, 0, payloadBytes.Length, encrypted: false);
        lock (Sync)
        {
            var sequence = Ledger.Append(subjectBytes, ReadOnlySequence<byte>.Empty, new ReadOnlySequence<byte>(payloadBytes), recordLength, accounted, 0, out _);
            Committer.Appended();
            return sequence;
        }
    }

    public string SubjectOf(ulong sequence)
    {
        lock (Sync)
        {
            return Encoding.UTF8.GetString(Blocks.SubjectOf(Blocks.Find(sequence)!, sequence, out _));
        }
    }

    /// <summary>The ids of the block files on the disk, sorted.</summary>
    public List<uint> BlockIds() =>
        [.. Disk.ListFiles(Msgs).Where(f => f.EndsWith(".blk", StringComparison.Ordinal)).Select(f => uint.Parse(f[..^4], System.Globalization.CultureInfo.InvariantCulture)).Order()];
}
