using System.Buffers;
using System.Text;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Fuzz.Support;
using Broker.TestKit;

namespace Broker.Fuzz.Targets;

/// <summary>
/// The monitoring endpoint's HTTP request parser (<see cref="HttpRequestParser"/>) and its query strings
/// (<see cref="QueryString"/>), fed as the monitoring connection feeds them: pipelined requests, each parsed from the
/// unconsumed rest plus what arrived since. Invariants: the requests and the final error are the same whether the
/// input arrives whole or cut up; an error is 400, 431 or 505 and ends the connection; a complete request consumes
/// bytes; a head never grows past the limit unrefused; a parsed query string escaped again parses to the same pairs.
/// </summary>
internal sealed class MonitoringHttpTarget : IFuzzTarget
{
    private const int MaxHeadBytes = 1024;

    public string Name => "monitoring-http";

    public void Run(ReadOnlySpan<byte> input)
    {
        var bytes = input.ToArray();
        var whole = Feed([bytes]);
        foreach (var layout in Splits.Layouts(bytes, randomLayouts: 4))
        {
            var split = Feed(layout);
            InvariantViolation.Check(split.SequenceEqual(whole), $"cut-up input parsed differently:\n whole: {string.Join(" | ", whole)}\n split: {string.Join(" | ", split)}");
        }
    }

    private static List<string> Feed(IReadOnlyList<byte[]> pieces)
    {
        var log = new List<string>();
        var pending = new List<byte[]>();
        foreach (var piece in pieces)
        {
            pending.Add(piece);
            var buffer = SegmentedSequence.Create(pending);
            while (true)
            {
                var status = HttpRequestParser.TryParse(buffer, MaxHeadBytes, out var consumed, out var request, out var error);
                if (status == HttpParseStatus.Error)
                {
                    InvariantViolation.Check(error.StatusCode is 400 or 431 or 505 && request is null, $"error {error.StatusCode}");
                    log.Add($"error {error.StatusCode} {error.Message}");
                    return log;
                }

                if (status == HttpParseStatus.Incomplete)
                {
                    InvariantViolation.Check(request is null, "a request from an incomplete head");
                    break;
                }

                var used = buffer.Slice(buffer.Start, consumed).Length;
                InvariantViolation.Check(used > 0 && request is not null, "a complete request that consumed nothing");
                log.Add(Describe(request!));
                buffer = buffer.Slice(consumed);
            }

            pending.Clear();
            foreach (var segment in buffer)
            {
                if (!segment.IsEmpty)
                {
                    pending.Add(segment.ToArray());
                }
            }
        }

        return log;
    }

    private static string Describe(HttpRequest request)
    {
        InvariantViolation.Check(request.Method.Length > 0 && request.Path.Length > 0 && request.Path[0] == '/', $"request '{request.Method} {request.Path}'");
        var query = QueryString.Parse(request.RawQuery);
        if (query is not null)
        {
            CheckQueryRoundTrip(query);
        }

        return $"{request.Method} {request.Path} ? {request.RawQuery} keepalive {request.KeepAlive} http10 {request.IsHttp10} body {request.HasBody} query {(query is null ? "invalid" : string.Join("&", query.ToDictionary()))}";
    }

    private static void CheckQueryRoundTrip(QueryString query)
    {
        var pairs = query.ToDictionary();
        var escaped = string.Join("&", pairs.Select(p => Uri.EscapeDataString(p.Key) + "=" + Uri.EscapeDataString(p.Value)));
        var again = QueryString.Parse(escaped);
        InvariantViolation.Check(again is not null, $"escaped query '{escaped}' does not parse");
        var pairsAgain = again!.ToDictionary();
        InvariantViolation.Check(
            pairs.Count == pairsAgain.Count && pairs.All(p => pairsAgain.TryGetValue(p.Key, out var v) && v == p.Value),
            $"escaped query '{escaped}' parses to other pairs");
    }
}
