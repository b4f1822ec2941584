namespace Broker.Fuzz.Support;

/// <summary>
/// Ways to cut an input into the pieces a socket might deliver. Cuts derive from the input itself (a stable hash), so
/// a run is deterministic: afl sees the same path for the same input, and a crash reproduces from its file alone.
/// </summary>
internal static class Splits
{
    /// <summary>Inputs up to this length are also cut at every single point.</summary>
    public const int EveryPointLimit = 48;

    /// <summary>A seed derived from the input's bytes (FNV-1a), the same in every process.</summary>
    public static int Seed(ReadOnlySpan<byte> input)
    {
        var hash = 2166136261u;
        foreach (var b in input)
        {
            hash = (hash ^ b) * 16777619u;
        }

        return (int)hash;
    }

    /// <summary>
    /// The cut layouts to try: every single cut point for short inputs, then <paramref name="randomLayouts"/> layouts
    /// of random cuts (one-byte pieces included).
    /// </summary>
    public static IEnumerable<byte[][]> Layouts(byte[] input, int randomLayouts)
    {
        if (input.Length <= EveryPointLimit)
        {
            for (var cut = 1; cut < input.Length; cut++)
            {
                yield return [input[..cut], input[cut..]];
            }
        }

        var random = new Random(Seed(input));
        for (var i = 0; i < randomLayouts && input.Length > 1; i++)
        {
            var pieces = new List<byte[]>();
            var position = 0;
            while (position < input.Length)
            {
                // Mostly small pieces, sometimes one byte, sometimes the rest.
                var length = random.Next(4) switch
                {
                    0 => 1,
                    1 => random.Next(1, 8),
                    2 => random.Next(1, 64),
                    _ => input.Length - position,
                };
                length = Math.Min(length, input.Length - position);
                pieces.Add(input[position..(position + length)]);
                position += length;
            }

            yield return [.. pieces];
        }
    }
}
