using System.Buffers;
using System.Text;
using Broker.Core.Internal.Protocol;
using Broker.Fuzz.Support;
using Broker.TestKit;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The NATS client protocol parser (<see cref="ProtocolParser"/>) fed the way a connection's read loop feeds it: the
/// unconsumed rest of one read followed by the next piece as a new pipe segment. Invariants: the operations and the
/// outcome are the same whether the input arrives whole or cut at any point; an operation is dispatched only once
/// whole; a line without its newline is never buffered past max_control_line plus the allowance; after an error the
/// parser is closed: parsing the same rest again gives the same error and dispatches nothing.
/// </summary>
internal sealed class NatsProtocolTarget : IFuzzTarget
{
    // Small limits, so that short fuzz inputs reach the limit checks.
    private static readonly ParserLimits Limits = new(MaxControlLine: 128, MaxPayload: 512);

    public string Name => "nats";

    public void Run(ReadOnlySpan<byte> input)
    {
        var bytes = input.ToArray();
        var whole = Feed([bytes]);
        foreach (var layout in Splits.Layouts(bytes, randomLayouts: 6))
        {
            var split = Feed(layout);
            if (!split.Equivalent(whole))
            {
                throw new InvariantViolation(
                    $"split parse differs from whole parse at cuts [{string.Join(",", layout.Select(p => p.Length))}]:\n whole: {whole}\n split: {split}");
            }
        }
    }

    /// <summary>Parses the pieces in order as a read loop would, until an error or a stop closes the connection.</summary>
    private static Outcome Feed(IReadOnlyList<byte[]> pieces)
    {
        var ops = new RecordingOps(new Session());
        var scratch = new byte[Limits.MaxControlLine + ProtocolParser.ControlLineAllowance + 2];
        var pending = new List<byte[]>();
        foreach (var piece in pieces)
        {
            if (piece.Length == 0)
            {
                continue;
            }

            pending.Add(piece);
            var buffer = SegmentedSequence.Create(pending);
            var status = ProtocolParser.Parse(ref ops, ref buffer, Limits, scratch, out var error);
            switch (status)
            {
                case ParseStatus.Error:
                    InvariantViolation.Check(error != ProtocolError.None, "Error status without an error");
                    CheckClosed(ops.Session, buffer, scratch, error);
                    return new Outcome(ops.Session.Log, error, Stopped: false);
                case ParseStatus.Stopped:
                    return new Outcome(ops.Session.Log, ProtocolError.None, Stopped: true);
            }

            InvariantViolation.Check(error == ProtocolError.None, $"NeedMoreData with error {error}");
            if (buffer.PositionOf((byte)'\n') is null)
            {
                InvariantViolation.Check(
                    buffer.Length <= Limits.MaxControlLine + ProtocolParser.ControlLineAllowance,
                    $"{buffer.Length} bytes of an unfinished control line buffered");
            }

            // What a pipe keeps after AdvanceTo(buffer.Start): the unconsumed rest, in its own segments.
            pending.Clear();
            foreach (var segment in buffer)
            {
                if (!segment.IsEmpty)
                {
                    pending.Add(segment.ToArray());
                }
            }
        }

        var rest = pending.Sum(p => (long)p.Length);
        return new Outcome(ops.Session.Log, ProtocolError.None, Stopped: false, Rest: rest);
    }

    private static void CheckClosed(Session session, ReadOnlySequence<byte> rest, byte[] scratch, ProtocolError error)
    {
        // The connection closes after an error; the parser holds no state, so the same rest must fail the same way
        // before any operation is dispatched.
        var count = session.Log.Count;
        var again = new RecordingOps(session);
        var status = ProtocolParser.Parse(ref again, ref rest, Limits, scratch, out var second);
        InvariantViolation.Check(status == ParseStatus.Error && second == error, $"after {error}, parsing the rest again gave {status}/{second}");
        InvariantViolation.Check(session.Log.Count == count, "an operation was dispatched after an error");
    }

    private sealed record Outcome(List<string> Log, ProtocolError Error, bool Stopped, long Rest = 0)
    {
        public bool Equivalent(Outcome other)
            => Log.SequenceEqual(other.Log) && Error == other.Error && Stopped == other.Stopped && Rest == other.Rest;

        public override string ToString() => $"{string.Join(" | ", Log)} => error {Error}, stopped {Stopped}, rest {Rest}";
    }

    /// <summary>The connection state the parser sees: authentication pending until CONNECT, headers after it.</summary>
    private sealed class Session
    {
        public bool Connected;

        public List<string> Log { get; } = [];
    }

    private readonly struct RecordingOps(Session session) : IProtocolOps
    {
        public Session Session => session;

        public bool ConnectRequired => !session.Connected;

        public bool HeadersEnabled => session.Connected;

        public bool OnConnect(ReadOnlySpan<byte> json)
        {
            session.Connected = true;
            return Add("CONNECT", json);
        }

        public bool OnPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> payload)
            => Add($"PUB {Text(subject)} {Text(replyTo)} {Convert.ToHexString(payload.ToArray())}");

        public bool OnHPub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
            => Add($"HPUB {Text(subject)} {Text(replyTo)} {Convert.ToHexString(headers.ToArray())} {Convert.ToHexString(payload.ToArray())}");

        public bool OnSub(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid)
            => Add($"SUB {Text(subject)} {Text(queue)} {Text(sid)}");

        public bool OnUnsub(ReadOnlySpan<byte> sid, long max) => Add($"UNSUB {Text(sid)} {max}");

        public bool OnPing() => Add("PING");

        public bool OnPong() => Add("PONG");

        // nats-server closes a connection that sends -ERR: stop, as the real handler does.
        public bool OnErr(ReadOnlySpan<byte> message) => Add("-ERR", message) && false;

        private bool Add(string op, ReadOnlySpan<byte> argument = default) => Add(argument.IsEmpty ? op : op + " " + Text(argument));

        private bool Add(string entry)
        {
            session.Log.Add(entry);
            return true;
        }

        private static string Text(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes) + "/" + Encoding.Latin1.GetString(bytes);
    }
}
