using System.Diagnostics;

namespace Broker.Fuzz.Support;

/// <summary>
/// A fuzz loop without afl: seeded random mutations of a corpus (bit flips, interesting bytes, inserts, deletes,
/// duplicated runs, splices with another entry), each run through a target. Deterministic for a given seed and
/// corpus, so a failure in the test command reproduces. It finds shallow bugs quickly; afl's coverage guidance
/// (scripts/fuzz.sh) goes deeper.
/// </summary>
internal static class MutationRunner
{
    private static readonly byte[] Interesting = [0, 1, 0x7F, 0x80, 0xFF, (byte)'\r', (byte)'\n', (byte)' ', (byte)'\t', (byte)'"', (byte)'{', (byte)'}', (byte)'.', (byte)'/', (byte)'+', (byte)'#', (byte)'*', (byte)'>', (byte)'0', (byte)'9'];

    /// <summary>A failing input: the bytes and what the target threw (or that it ran too long).</summary>
    public sealed record Failure(byte[] Input, string Error);

    /// <summary>
    /// Runs mutations of <paramref name="corpus"/> through <paramref name="target"/> for <paramref name="duration"/>;
    /// returns the executions run and the first failure, if any. An input running longer than
    /// <paramref name="hangLimit"/> counts as a hang.
    /// </summary>
    public static (long Executions, Failure? Failure) Run(IFuzzTarget target, IReadOnlyList<byte[]> corpus, int seed, TimeSpan duration, TimeSpan hangLimit)
    {
        var random = new Random(seed);
        var pool = corpus.Count > 0 ? corpus.ToList() : [[]];
        var clock = Stopwatch.StartNew();
        long executions = 0;
        while (clock.Elapsed < duration)
        {
            var input = Mutate(random, pool[random.Next(pool.Count)], pool);
            var started = clock.Elapsed;
            try
            {
                target.Run(input);
            }
            catch (Exception ex)
            {
                return (executions + 1, new Failure(input, ex.ToString()));
            }

            executions++;
            if (clock.Elapsed - started > hangLimit)
            {
                return (executions, new Failure(input, $"ran {(clock.Elapsed - started).TotalMilliseconds:F0} ms (hang limit {hangLimit.TotalMilliseconds:F0} ms)"));
            }

            // Keep some mutants as new parents, so changes accumulate (a poor man's corpus growth).
            if (random.Next(16) == 0 && pool.Count < 256)
            {
                pool.Add(input);
            }
        }

        return (executions, null);
    }

    public static byte[] Mutate(Random random, byte[] parent, IReadOnlyList<byte[]> pool)
    {
        var data = new List<byte>(parent);
        var rounds = 1 + random.Next(4);
        for (var i = 0; i < rounds; i++)
        {
            var position = data.Count == 0 ? 0 : random.Next(data.Count);
            switch (random.Next(7))
            {
                case 0 when data.Count > 0:
                    data[position] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when data.Count > 0:
                    data[position] = Interesting[random.Next(Interesting.Length)];
                    break;
                case 2:
                    data.Insert(position, random.Next(2) == 0 ? Interesting[random.Next(Interesting.Length)] : (byte)random.Next(256));
                    break;
                case 3 when data.Count > 0:
                    data.RemoveRange(position, Math.Min(data.Count - position, 1 + random.Next(8)));
                    break;
                case 4 when data.Count > 0:
                    var length = Math.Min(data.Count - position, 1 + random.Next(16));
                    data.InsertRange(random.Next(data.Count + 1), data.GetRange(position, length));
                    break;
                case 5:
                    var other = pool[random.Next(pool.Count)];
                    if (other.Length > 0)
                    {
                        var from = random.Next(other.Length);
                        data.InsertRange(position, other.AsSpan(from, Math.Min(other.Length - from, 1 + random.Next(32))).ToArray());
                    }

                    break;
                default:
                    if (data.Count > 0)
                    {
                        data.RemoveRange(position, data.Count - position);
                    }

                    break;
            }
        }

        return [.. data];
    }
}
