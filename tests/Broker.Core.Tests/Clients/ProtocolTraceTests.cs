using System.Buffers;
using System.Net;
using System.Text;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;
using Broker.Core.Tests.Auth;
using Broker.Core.Tests.Protocol;

namespace Broker.Core.Tests.Clients;

/// <summary>Protocol tracing (-V): nats-server's line shapes, the client prefix, redaction, and the per-read tracing parser view.</summary>
public sealed class ProtocolTraceTests
{
    private static readonly IPEndPoint Remote = new(IPAddress.Loopback, 50604);

    [Fact]
    public void Operations_in_and_out_are_printed_as_nats_server_prints_them()
    {
        var logger = new RecordingLogger();
        var trace = new ProtocolTrace(logger, Remote, 4);
        Assert.True(trace.Enabled);

        trace.TraceInSubscribe("foo"u8, "q"u8, "1"u8);
        trace.TraceInUnsubscribe("1"u8, 5);
        trace.TraceOutProtocol("+OK\r\n"u8);
        trace.TraceOutProtocol("-ERR 'Unknown Protocol Operation'\r\n"u8);
        trace.TraceOutProtocol("INFO {}\r\n"u8);
        trace.ClientName = "svc";
        trace.TraceOutMessage("foo"u8, "1"u8, "r"u8, withHeaders: true, headerLength: 12, totalLength: 17);
        trace.TraceSubscriptionRemoved("1");

        Assert.Equal(
        [
            "127.0.0.1:50604 - cid:4 - <<- [SUB foo q 1]",
            "127.0.0.1:50604 - cid:4 - <<- [UNSUB 1 5]",
            "127.0.0.1:50604 - cid:4 - ->> [OK]",
            "127.0.0.1:50604 - cid:4 - ->> [-ERR Unknown Protocol Operation]",
            "127.0.0.1:50604 - cid:4 - \"svc\" - ->> [HMSG foo 1 r 12 17]",
            "127.0.0.1:50604 - cid:4 - \"svc\" - <-> [DELSUB 1]",
        ], logger.Entries.Select(e => e.Message));
    }

    [Fact]
    public void A_publish_is_traced_with_its_payload_and_connect_without_its_secrets()
    {
        var logger = new RecordingLogger();
        var trace = new ProtocolTrace(logger, null, 9);

        trace.TraceInPublish("foo"u8, "bar"u8, new ReadOnlySequence<byte>("H:1"u8.ToArray()), new ReadOnlySequence<byte>("hi"u8.ToArray()), hpub: true);
        trace.TraceInConnect("""{"user":"a","pass":"p\"w","auth_token":"t"}"""u8);

        Assert.Equal(
        [
            "cid:9 - <<- [HPUB foo bar 3 5]",
            "cid:9 - <<- MSG_PAYLOAD: [\"H:1hi\"]",
            "cid:9 - <<- [CONNECT {\"user\":\"a\",\"pass\":\"[REDACTED]\",\"auth_token\":\"[REDACTED]\"}]",
        ], logger.Entries.Select(e => e.Message));
    }

    [Fact]
    public void The_tracing_view_traces_each_operation_before_handing_it_on()
    {
        var logger = new RecordingLogger();
        var handled = new List<string>();
        var ops = new TracingProtocolOps<RecordingOps>(new RecordingOps(handled), new ProtocolTrace(logger, null, 1));
        var buffer = new ReadOnlySequence<byte>(Encoding.ASCII.GetBytes("SUB foo 1\r\nPUB foo 2\r\nhi\r\nPING\r\n-ERR 'x'\r\n"));
        var scratch = new byte[4096];

        var status = ProtocolParser.Parse(ref ops, ref buffer, new ParserLimits(4096, 1024 * 1024), scratch, out _);

        Assert.NotEqual(ParseStatus.Error, status);
        Assert.Equal(["SUB foo [] 1", "PUB foo [] hi", "PING", "-ERR 'x'"], handled);
        Assert.Equal(["cid:1 - <<- [SUB foo 1]", "cid:1 - <<- [PUB foo 2]", "cid:1 - <<- MSG_PAYLOAD: [\"hi\"]", "cid:1 - <<- [PING]"], logger.Entries.Select(e => e.Message));
    }
}
