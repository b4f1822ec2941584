using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Subscriptions;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// Protocol tracing (nats-server's <c>-V</c>): every operation the client sends and every one it is sent, as
/// nats-server's <c>traceInOp</c>/<c>traceOutOp</c>/<c>traceMsg</c> print them. Whether a connection traces is decided
/// when it is accepted and again on each configuration reload (the logger's Trace level); when it does not, the only
/// cost on the hot path is reading <see cref="tracing"/>.
/// </summary>
internal sealed partial class NatsClient
{
    private const string In = "<<-";
    private const string Out = "->>";
    private const string Both = "<->";

    private bool tracing;

    /// <summary>Reads whether the logger traces; at acceptance and after a reload.</summary>
    private void RefreshTracing() => tracing = logger.IsEnabled(LogLevel.Trace);

    // nats-server's client prefix: "127.0.0.1:50604 - cid:4", with the client's name once CONNECT gave one.
    private string TracePrefix()
    {
        var prefix = RemoteEndPoint is { } remote ? $"{remote} - cid:{Id}" : $"cid:{Id}";
        return string.IsNullOrEmpty(Name) ? prefix : $"{prefix} - {GoQuote.Quote(Encoding.UTF8.GetBytes(Name))}";
    }

    private void TraceIn(string operation) => TraceLog.Operation(logger, TracePrefix(), In, operation);

    private void TraceInConnect(ReadOnlySpan<byte> json) => TraceIn("CONNECT " + Redact(Encoding.UTF8.GetString(json)));

    private void TraceInPublish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload, bool hpub)
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
        var prefix = TracePrefix();
        TraceLog.Operation(logger, prefix, In, line.ToString());

        // Headers and payload as one, as they arrived.
        var all = new byte[headers.Length + payload.Length];
        headers.CopyTo(all);
        payload.CopyTo(all.AsSpan((int)headers.Length));
        TraceLog.Payload(logger, prefix, GoQuote.Quote(all));
    }

    private void TraceInSubscribe(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> queue, ReadOnlySpan<byte> sid) =>
        TraceIn(queue.IsEmpty
            ? $"SUB {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(sid)}"
            : $"SUB {Encoding.UTF8.GetString(subject)} {Encoding.UTF8.GetString(queue)} {Encoding.UTF8.GetString(sid)}");

    private void TraceInUnsubscribe(ReadOnlySpan<byte> sid, long max) =>
        TraceIn(max < 0 ? $"UNSUB {Encoding.UTF8.GetString(sid)}" : $"UNSUB {Encoding.UTF8.GetString(sid)} {max.ToString(CultureInfo.InvariantCulture)}");

    /// <summary>A protocol line sent to the client: <c>PONG</c>, <c>PING</c>, <c>+OK</c> (traced as <c>OK</c>), <c>-ERR 'x'</c> (as <c>-ERR x</c>); INFO is not traced, as in nats-server.</summary>
    private void TraceOutProtocol(ReadOnlySpan<byte> line)
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
        TraceLog.Operation(logger, TracePrefix(), Out, operation);
    }

    /// <summary>A delivery: the MSG/HMSG line without its CRLF.</summary>
    private void TraceOutMessage(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> sid, ReadOnlySpan<byte> replyTo, bool withHeaders, int headerLength, int totalLength)
    {
        Span<byte> line = stackalloc byte[MessageLineOverhead + subject.Length + sid.Length + replyTo.Length];
        var written = WriteMessageLine(line, withHeaders, subject, sid, replyTo, headerLength, totalLength);
        TraceLog.Operation(logger, TracePrefix(), Out, Encoding.UTF8.GetString(line[..(written - 2)]));
    }

    protected override void OnSubscriptionRemoved(Subscription subscription)
    {
        if (tracing)
        {
            TraceLog.Operation(logger, TracePrefix(), Both, "DELSUB " + subscription.SidString);
        }
    }

    // nats-server's removePassFromTrace replaces the first password; the token is hidden too (nats-server 2.9 logs it).
    private static string Redact(string connect) =>
        SecretField().Replace(connect, match => match.Value[..(match.Groups["value"].Index - match.Index)] + "[REDACTED]" + match.Value[(match.Groups["value"].Index - match.Index + match.Groups["value"].Length)..]);

    [GeneratedRegex("\"(?:pass|auth_token)\"\\s*:\\s*\"(?<value>(?:[^\"\\\\]|\\\\.)*)\"")]
    private static partial Regex SecretField();
}
