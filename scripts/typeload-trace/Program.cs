// Usage: dotnet trace.dll FILE.nettrace (run.sh records one). See run.sh.
using Microsoft.Diagnostics.Tracing;

// The start-up thread's phases: each starts at the first call into precompiled code of a method whose name contains
// the text (our methods are all in ReadyToRun images), and is named by what runs in it.
(string Mark, string Name)[] phases =
[
    ("Broker.Host.Program::<Main>", "Main: signals, host environment"),
    ("CommandLine::Parse", "flags, configuration"),
    ("PluginCatalog::FolderOf", "plugin discovery"),
    ("HostSettings::Bind", "settings, Serilog"),
    ("BrokerRunner::.ctor", "runner, signals, system imports"),
    ("PluginLoaders::Create", "plugin contexts, plugin types"),
    ("BrokerServer::AddPlugin", "plugins' services, BrokerServer, JetStream engine"),
    ("JetStreamEngine::.ctor", "JetStream start, system account"),
    ("JetStreamAccount+<RecoverAsync>", "stream recovery"),
    ("StartupWarmUpGate+<StartAsync>", "the warm-up gate, listen"),
];
var dump = Environment.GetEnvironmentVariable("DUMP")?.Split(':');
using var source = new EventPipeEventSource(args[0]);
var start = -1.0;
var counts = new Dictionary<int, int[]>(); // type loads, R2R first calls, JIT, assemblies
var marks = new List<(double Time, int Thread, string Method)>();
int[] Of(int thread) => counts.TryGetValue(thread, out var c) ? c : counts[thread] = new int[4];
var snapshots = new List<(double Time, int Thread, string Method, int[] Counts)>();
source.Clr.All += e => { if (start < 0) { start = e.TimeStampRelativeMSec; } };
source.Clr.TypeLoadStop += e =>
{
    Of(e.ThreadID)[0]++;
    var t = e.TimeStampRelativeMSec - start;
    if (dump is { Length: 3 } && e.ThreadID == int.Parse(dump[0]) && t >= double.Parse(dump[1]) && t <= double.Parse(dump[2]))
    {
        Console.Error.WriteLine($"{t,8:F2} {e.TypeName}");
    }
};
source.Clr.MethodR2RGetEntryPoint += e =>
{
    Of(e.ThreadID)[1]++;
    snapshots.Add((e.TimeStampRelativeMSec - start, e.ThreadID, e.MethodNamespace + "::" + e.MethodName, (int[])Of(e.ThreadID).Clone()));
};
source.Clr.MethodLoadVerbose += e => { if (!e.IsJitted) { return; } Of(e.ThreadID)[2]++; };
source.Clr.LoaderAssemblyLoad += e => Of(e.ThreadID)[3]++;
source.Process();

foreach (var (thread, c) in counts.OrderByDescending(p => p.Value[0]).Take(6))
{
    Console.WriteLine($"thread {thread}: type loads {c[0]}, R2R first calls {c[1]}, JIT {c[2]}, assemblies {c[3]}");
}

var main = counts.MaxBy(p => p.Value[0]).Key;
var previous = (Time: 0.0, Counts: new int[4]);
var name = "runtime to Main";
foreach (var (mark, next) in phases)
{
    var hit = snapshots.FirstOrDefault(s => s.Thread == main && s.Method.Contains(mark, StringComparison.Ordinal));
    if (hit.Counts is null)
    {
        continue;
    }

    Console.WriteLine($"{name,-52} {hit.Time - previous.Time,7:F1} ms traced {hit.Counts[0] - previous.Counts[0],6} types {hit.Counts[1] - previous.Counts[1],6} R2R {hit.Counts[2] - previous.Counts[2],4} JIT");
    previous = (hit.Time, hit.Counts);
    name = next;
}

var end = Of(main);
Console.WriteLine($"{name + " (to the end of the trace)",-52} {"",7}           {end[0] - previous.Counts[0],6} types {end[1] - previous.Counts[1],6} R2R {end[2] - previous.Counts[2],4} JIT");
