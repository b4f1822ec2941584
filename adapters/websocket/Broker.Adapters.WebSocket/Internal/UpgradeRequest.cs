using System.Buffers;
using System.IO.Pipelines;
using System.Text;

namespace Broker.Adapters.WebSocket.Internal;

/// <summary>
/// An HTTP/1.1 request head (request line and headers) read from the connection with a size limit; the body of an
/// upgrade request is empty, so nothing else is read.
/// </summary>
internal sealed class UpgradeRequest
{
    /// <summary>Larger request heads are refused with 431, as Go's HTTP server does past its limit.</summary>
    public const int MaxHeadBytes = 16 * 1024;

    private readonly Dictionary<string, List<string>> headers = new(StringComparer.OrdinalIgnoreCase);

    private UpgradeRequest(string method, string target)
    {
        Method = method;
        Target = target;
    }

    public string Method { get; }

    public string Target { get; }

    /// <summary>The path of the target, without the query.</summary>
    public string Path => Target.Split('?', 2)[0];

    /// <summary>The first value of a header, or <see langword="null"/>.</summary>
    public string? this[string name] => headers.TryGetValue(name, out var values) ? values[0] : null;

    public IReadOnlyList<string> Values(string name) => headers.TryGetValue(name, out var values) ? values : [];

    /// <summary>Whether a comma-separated header holds <paramref name="token"/> (case-insensitive), as nats-server's <c>wsHeaderContains</c>.</summary>
    public bool HasToken(string name, string token)
        => Values(name).Any(v => v.Split(',').Any(t => t.Trim(' ', '\t').Equals(token, StringComparison.OrdinalIgnoreCase)));

    /// <summary>Cookies of the request, by name (the first wins).</summary>
    public Dictionary<string, string> Cookies()
    {
        var cookies = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var header in Values("Cookie"))
        {
            foreach (var pair in header.Split(';', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
            {
                var equals = pair.IndexOf('=', StringComparison.Ordinal);
                if (equals > 0)
                {
                    var value = pair[(equals + 1)..].Trim();
                    if (value.Length >= 2 && value[0] == '"' && value[^1] == '"')
                    {
                        value = value[1..^1];
                    }

                    cookies.TryAdd(pair[..equals].Trim(), value);
                }
            }
        }

        return cookies;
    }

    /// <summary>
    /// Reads a request head. Returns the request, or an HTTP status to answer with (400 malformed, 431 too large),
    /// or neither when the peer closed first, and whether bytes followed the head.
    /// </summary>
    public static async Task<(UpgradeRequest? Request, int Status, bool ExtraData)> ReadAsync(PipeReader input, CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await input.ReadAsync(cancellationToken).ConfigureAwait(false);
            var buffer = result.Buffer;
            var end = FindHeadEnd(buffer);
            if (end is { } headEnd)
            {
                // Everything is decided before AdvanceTo: the buffer must not be touched afterwards.
                var rest = buffer.Slice(headEnd);
                var tooLarge = headEnd > MaxHeadBytes;
                var request = tooLarge ? null : Parse(Encoding.Latin1.GetString(buffer.Slice(0, headEnd)));
                var extra = !rest.IsEmpty;
                input.AdvanceTo(rest.Start);
                return tooLarge ? (null, 431, extra) : request is null ? (null, 400, extra) : (request, 0, extra);
            }

            if (buffer.Length > MaxHeadBytes)
            {
                input.AdvanceTo(buffer.End);
                return (null, 431, false);
            }

            input.AdvanceTo(buffer.Start, buffer.End);
            if (result.IsCompleted || result.IsCanceled)
            {
                return (null, 0, false);
            }
        }
    }

    private static long? FindHeadEnd(in ReadOnlySequence<byte> buffer)
    {
        var reader = new SequenceReader<byte>(buffer);
        return reader.TryReadTo(out ReadOnlySequence<byte> _, "\r\n\r\n"u8, advancePastDelimiter: true) ? reader.Consumed : null;
    }

    private static UpgradeRequest? Parse(string head)
    {
        var lines = head.Split("\r\n");
        var requestLine = lines[0].Split(' ');
        if (requestLine.Length != 3 || requestLine[0].Length == 0 || !requestLine[1].StartsWith('/') || !requestLine[2].StartsWith("HTTP/1.", StringComparison.Ordinal))
        {
            return null;
        }

        var request = new UpgradeRequest(requestLine[0], requestLine[1]);
        foreach (var line in lines.Skip(1))
        {
            if (line.Length == 0)
            {
                continue;
            }

            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon <= 0 || line[..colon].Any(c => c is ' ' or '\t'))
            {
                return null;
            }

            var name = line[..colon];
            if (!request.headers.TryGetValue(name, out var values))
            {
                values = [];
                request.headers[name] = values;
            }

            values.Add(line[(colon + 1)..].Trim(' ', '\t'));
        }

        return request;
    }
}
