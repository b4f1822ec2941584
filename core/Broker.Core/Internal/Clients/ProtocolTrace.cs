using System.Buffers;
using System.Globalization;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;
using Broker.Core.Internal.Logging;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Protocol tracing of one NATS connection (nats-server's <c>-V</c>): every operation the client sends and every one
/// it is sent, as nats-server's <c>traceInOp</c>/<c>traceOutOp</c>/<c>traceMsg</c> print them. Whether a connection
/// traces is decided when it is accepted and again on each configuration reload (the logger's Trace level); when it
/// does not, the only cost on the hot path is the connection reading <see cref="Enabled"/>. Callers check it first.
/// </summary>
internal sealed partial class ProtocolTrace
{
    private const string In = "<<-";
    private const string Out = "->>";
    private const string Both = "<->";

    private readonly ILogger logger;
    private readonly IPEndPoint? remote;
    private readonly ulong id;

    public ProtocolTrace(ILogger logger, IPEndPoint? remote, ulong id)
    {
        this.logger = logger;
        this.remote = remote;
        this.id = id;
        Refresh();
    }

    /// <summary>Whether this connection traces.</summary>
    public bool Enabled { get; private set; }

    /// <summary>The name the client gave in CONNECT, shown in every line once given.</summary>
    public string? ClientName { get; set; }

    /// <summary>Reads whether the logger traces; at acceptance and after a reload.</summary>
    public void Refresh() => Enabled = logger.IsEnabled(LogLevel.Trace);

    /// <summary>An operation from the client, as it is printed (<c>PING</c>).</summary>
    public void TraceIn(string operation) => TraceLog.Operation(logger, Prefix(), In, operation);

    /// <summary>CONNECT, with its password and token hidden.</summary>
    public void TraceInConnect(ReadOnlySpan<byte> json) => TraceIn("CONNECT " + Redact(Encoding.UTF8.GetString(json)));

    /// <summary>PUB or HPUB: the line, then headers and payload as one, as they arrived.</summary>
    public void TraceInPublish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, bool hpub)
    {
        var line = new StringBuilder(hpub ? "HPUB " : "PUB ").Append(Encoding.UTF8.GetString(subject));
        if (!replyTo.IsEmpty)
        {
            line.Append(' ').Append(Encoding.UTF8.GetString(replyTo));
        }

        if (hpub)
        {
            line.Append(' ').Append(headers.Length.ToString(CultureInfo.InvariantCulture));
        }

        line.Append(' ').Append((headers.Length + payload.Length).ToString(CultureInfo.InvariantCulture));
        var prefix = Prefix();
        TraceLog.Operation(logger, prefix, In, line.ToString());

        var all = new byte[headers.Length + payload.Length];
        headers.CopyTo(all);
        payload.CopyTo(all.AsSpan((int)headers.Length));
        TraceLog.Payload(logger, prefix, GoQuote.Quote(all));
    }

    public void TraceInSubscribe(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) =>
        TraceIn(queue.IsEmpty
            ? $"SUB {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(sid)}"
            : $"SUB {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(queue)} {Encoding.UTF8.GetString(sid)}");

    public void TraceInUnsubscribe(ReadOnlySpan<byte> sid, long max) =>
        TraceIn(max < 0 ? $"UNSUB {Encoding.UTF8.GetString(sid)}" : $"UNSUB {Encoding.UTF8.GetString(sid)} {max.ToString(CultureInfo.InvariantCulture)}");

    /// <summary>A protocol line sent to the client: <c>PONG</c>, <c>PING</c>, <c>+OK</c> (traced as <c>OK</c>), <c>-ERR 'x'</c> (as <c>-ERR x</c>); INFO is not traced, as in nats-server.</summary>
    public void TraceOutProtocol(ReadOnlySpan<byte> line)
    {
        var text = Encoding.UTF8.GetString(line).TrimEnd('\r', '\n');
        if (text.StartsWith("INFO ", StringComparison.Ordinal))
        {
            return;
        }

        var operation = text switch
        {
            "+OK" => "OK",
            _ when text.StartsWith("-ERR '", StringComparison.Ordinal) && text.EndsWith('\'') => "-ERR " + text[6..^1],
            _ => text,
        };
        TraceLog.Operation(logger, Prefix(), Out, operation);
    }

    /// <summary>A delivery: the MSG/HMSG line without its CRLF.</summary>
    public void TraceOutMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> replyTo, bool withHeaders, int headerLength, int totalLength)
    {
        Span<byte> line = stackalloc byte[MessageFrame.LineOverhead + subject.Length + sid.Length + replyTo.Length];
        var written = MessageFrame.WriteLine(line, withHeaders, subject, sid, replyTo, headerLength, totalLength);
        TraceLog.Operation(logger, Prefix(), Out, Encoding.UTF8.GetString(line[..(written - 2)]));
    }

    /// <summary>A subscription ended (UNSUB, its auto-unsubscribe limit, a reload, the connection closing).</summary>
    public void TraceSubscriptionRemoved(string sid) => TraceLog.Operation(logger, Prefix(), Both, "DELSUB " + sid);

    /// <summary>nats-server's password redaction of a CONNECT (its <c>removePassFromTrace</c>), extended to the token.</summary>
    internal static string Redact(string connect) =>
        SecretField().Replace(connect, match => match.Value[..(match.Groups["value"].Index - match.Index)] + "[REDACTED]" + match.Value[(match.Groups["value"].Index - match.Index + match.Groups["value"].Length)..]);

    // nats-server's client prefix: "127.0.0.1:50604 - cid:4", with the client's name once CONNECT gave one.
    private string Prefix()
    {
        var prefix = remote is { } endPoint ? $"{endPoint} - cid:{id}" : $"cid:{id}";
        var name = ClientName;
        return string.IsNullOrEmpty(name) ? prefix : $"{prefix} - {GoQuote.Quote(Encoding.UTF8.GetBytes(name))}";
    }

    // nats-server's removePassFromTrace replaces the first password; the token is hidden too (nats-server 2.9 logs it).
    [GeneratedRegex("\"(?:pass|auth_token)\"\\s*:\\s*\"(?<value>(?:[^\"\\\\]|\\\\.)*)\"")]
    private static partial Regex SecretField();
}
