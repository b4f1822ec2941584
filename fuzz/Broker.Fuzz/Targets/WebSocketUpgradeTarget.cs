using System.IO.Pipelines;
using System.Text;
using Broker.Adapters.WebSocket;
using Broker.Adapters.WebSocket.Internal;
using Broker.Fuzz.Support;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The HTTP upgrade request parser of adapters/websocket (<see cref="UpgradeRequest.ReadAsync"/>) and the handshake
/// checks that read it (<see cref="Handshake"/>, the origin policy, cookies). Invariants: no exception; the outcome
/// (request line, the headers the handshake reads, status) is the same whether the head arrives whole or
/// cut up; a head over the size limit is refused with 431 and a parsed request has a GET-able shape (method token,
/// target starting with '/'); an accepted upgrade answers 101 with the RFC 6455 accept key.
/// </summary>
internal sealed class WebSocketUpgradeTarget : IFuzzTarget
{
    private static readonly string[] HeaderNames =
        ["Host", "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Extensions", "Origin", "Cookie", "X-Forwarded-For"];

    private static readonly Handshake Strict = new(new WebSocketOptions { Compression = true, SameOrigin = true, AllowedOrigins = ["http://localhost:8080", "https://example.com"] });

    private static readonly Handshake Open = new(new WebSocketOptions());

    public string Name => "websocket-upgrade";

    public void Run(ReadOnlySpan<byte> input)
    {
        var bytes = input.ToArray();
        var whole = Feed([bytes]);
        foreach (var layout in Splits.Layouts(bytes, randomLayouts: 3))
        {
            var split = Feed(layout);
            InvariantViolation.Check(split.Description == whole.Description, $"cut-up head parsed differently:\n whole: {whole}\n split: {split}");

            // "Data before the handshake completed" depends on what had arrived with the head (nats-server checks its
            // buffered bytes too): cut up, the rest may come later, never sooner.
            InvariantViolation.Check(!split.Extra || whole.Extra, "a cut-up head saw extra data the whole one did not");
        }
    }

    private static (string Description, bool Extra) Feed(IReadOnlyList<byte[]> pieces) => FeedAsync(pieces).GetAwaiter().GetResult();

    private static async Task<(string Description, bool Extra)> FeedAsync(IReadOnlyList<byte[]> pieces)
    {
        var pipe = new Pipe(new PipeOptions(readerScheduler: PipeScheduler.Inline, writerScheduler: PipeScheduler.Inline, pauseWriterThreshold: 0, useSynchronizationContext: false));
        var read = UpgradeRequest.ReadAsync(pipe.Reader, CancellationToken.None);
        foreach (var piece in pieces)
        {
            await pipe.Writer.WriteAsync(piece).ConfigureAwait(false);
        }

        await pipe.Writer.CompleteAsync().ConfigureAwait(false);
        var (request, status, extra) = await read.ConfigureAwait(false);
        if (request is null)
        {
            InvariantViolation.Check(status is 0 or 400 or 431, $"status {status} without a request");
            InvariantViolation.Check(status != 0 || Encoding.Latin1.GetString([.. pieces.SelectMany(p => p)]).IndexOf("\r\n\r\n", StringComparison.Ordinal) < 0, "a complete head gave neither a request nor a status");
            return ($"status {status}", extra);
        }

        InvariantViolation.Check(status == 0, "a request with a status");
        InvariantViolation.Check(request.Method.Length > 0 && request.Target.StartsWith('/') && request.Path.StartsWith('/'), $"parsed request '{request.Method} {request.Target}'");
        var description = new StringBuilder($"{request.Method} {request.Target}");
        foreach (var name in HeaderNames)
        {
            description.Append(" | ").Append(name).Append(": ").AppendJoin(", ", request.Values(name));
        }

        foreach (var (name, value) in request.Cookies())
        {
            description.Append(" | cookie ").Append(name).Append('=').Append(value);
        }

        foreach (var (handshake, secure) in new[] { (Strict, false), (Strict, true), (Open, false) })
        {
            var refusal = handshake.Check(request, secure);
            description.Append(" | check ").Append(refusal?.Status ?? 101);
            if (refusal is null)
            {
                var compression = handshake.NegotiatesCompression(request);
                var response = Encoding.Latin1.GetString(handshake.Accept(request, compression));
                InvariantViolation.Check(
                    response.StartsWith("HTTP/1.1 101 ", StringComparison.Ordinal) && response.Contains(Handshake.AcceptKey(request["Sec-WebSocket-Key"]!), StringComparison.Ordinal),
                    "an accepted upgrade without its accept key");
            }
            else
            {
                InvariantViolation.Check(Handshake.Error(refusal.Value.Status).Length > 0, "no error response");
            }
        }

        return (description.ToString(), extra);
    }
}
