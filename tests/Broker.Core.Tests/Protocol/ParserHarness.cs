using System.Buffers;
using System.Text;
using Broker.Core.Internal.Protocol;
using Broker.TestKit;

namespace Broker.Core.Tests.Protocol;

/// <summary>Feeds input to the parser the way the read loop does: chunk by chunk, keeping what was not consumed.</summary>
internal static class ParserHarness
{
    public static readonly ParserLimits DefaultLimits = new(4096, 1024 * 1024);

    public sealed record Result(List<string> Ops, ParseStatus Status, ProtocolError Error, long Unconsumed);

    public static Result Parse(string input, ParserLimits? limits = null, bool connectRequired = false, bool headers = true)
        => Feed([Encoding.Latin1.GetBytes(input)], limits, connectRequired, headers);

    /// <summary>Delivers the chunks one read at a time; unconsumed bytes stay in front of the next chunk.</summary>
    public static Result Feed(IReadOnlyList<byte[]> chunks, ParserLimits? limits = null, bool connectRequired = false, bool headers = true)
    {
        var log = new List<string>();
        var ops = new RecordingOps(log, connectRequired, headers);
        var scratch = new byte[(limits ?? DefaultLimits).MaxControlLine + ProtocolParser.ControlLineAllowance + 2];
        var held = new List<byte[]>();
        var status = ParseStatus.NeedMoreData;
        var error = ProtocolError.None;
        ReadOnlySequence<byte> buffer = default;
        foreach (var chunk in chunks)
        {
            held.Add(chunk);
            buffer = SegmentedSequence.Create([.. held]);
            status = ProtocolParser.Parse(ref ops, ref buffer, limits ?? DefaultLimits, scratch, out error);
            if (status != ParseStatus.NeedMoreData)
            {
                break;
            }

            // Keep only what the parser left (as separate segments, like a pipe that still holds them).
            held = buffer.IsEmpty ? [] : [.. SplitIntoSegments(buffer)];
        }

        return new Result(log, status, error, buffer.Length);
    }

    public static IEnumerable<byte[][]> EverySplit(byte[] input)
    {
        for (var i = 1; i < input.Length; i++)
        {
            yield return [input[..i], input[i..]];
        }
    }

    public static IEnumerable<byte[][]> EveryThreeWaySplit(byte[] input, int step)
    {
        for (var i = 1; i < input.Length - 1; i += step)
        {
            for (var j = i + 1; j < input.Length; j += step)
            {
                yield return [input[..i], input[i..j], input[j..]];
            }
        }
    }

    private static IEnumerable<byte[]> SplitIntoSegments(ReadOnlySequence<byte> sequence)
    {
        foreach (var memory in sequence)
        {
            yield return memory.ToArray();
        }
    }
}
