using Broker.Fuzz.Support;
using SharpFuzz;

namespace Broker.Fuzz;

/// <summary>
/// <c>Broker.Fuzz &lt;target&gt;</c> runs a target under afl-fuzz (SharpFuzz's fork server, one input per run);
/// <c>Broker.Fuzz &lt;target&gt; &lt;file|folder&gt;...</c> runs it once over each file (to reproduce a crash);
/// <c>Broker.Fuzz list</c> prints the target names.
/// </summary>
internal static class Program
{
    public static int Main(string[] args)
    {
        if (args.Length == 0 || args[0] == "list")
        {
            Console.WriteLine(string.Join(Environment.NewLine, FuzzTargets.All.Select(t => t.Name)));
            return args.Length == 0 ? 2 : 0;
        }

        var target = FuzzTargets.Find(args[0]);
        if (target is null)
        {
            Console.Error.WriteLine($"unknown target '{args[0]}'; targets: {string.Join(", ", FuzzTargets.All.Select(t => t.Name))}");
            return 2;
        }

        if (args.Length == 1)
        {
            // Exceptions escaping the action are the crashes afl records.
            Fuzzer.OutOfProcess.Run(stream =>
            {
                using var copy = new MemoryStream();
                stream.CopyTo(copy);
                target.Run(copy.GetBuffer().AsSpan(0, (int)copy.Length));
            });
            return 0;
        }

        if (args[1] == "--mutate")
        {
            // Broker.Fuzz <target> --mutate <seconds> <corpus folder> [seed]: the in-process loop, without afl.
            var corpus = Expand(args[3]).Select(File.ReadAllBytes).ToList();
            var seed = args.Length > 4 ? int.Parse(args[4], System.Globalization.CultureInfo.InvariantCulture) : 1;
            var (executions, failure) = MutationRunner.Run(target, corpus, seed, TimeSpan.FromSeconds(double.Parse(args[2], System.Globalization.CultureInfo.InvariantCulture)), TimeSpan.FromSeconds(2));
            Console.WriteLine($"{target.Name}: {executions} executions, {(failure is null ? "no failure" : "FAILURE")}");
            if (failure is not null)
            {
                var path = $"crash-{target.Name}-{Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(failure.Input))[..12].ToLowerInvariant()}";
                File.WriteAllBytes(path, failure.Input);
                Console.WriteLine($"{path}: {failure.Error}");
            }

            return failure is null ? 0 : 1;
        }

        var failed = 0;
        foreach (var file in args.Skip(1).SelectMany(Expand))
        {
            try
            {
                target.Run(File.ReadAllBytes(file));
                Console.WriteLine($"ok    {file}");
            }
            catch (Exception ex)
            {
                failed++;
                Console.WriteLine($"CRASH {file}: {ex}");
            }
        }

        return failed == 0 ? 0 : 1;
    }

    private static IEnumerable<string> Expand(string path)
        => Directory.Exists(path) ? Directory.EnumerateFiles(path, "*", SearchOption.AllDirectories).Order(StringComparer.Ordinal) : [path];
}
