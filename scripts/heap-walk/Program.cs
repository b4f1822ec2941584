// scripts/heap-walk: the ClrMD walker run.sh builds and runs (see run.sh for usage).
// Usage: walk PID OUTFILE  -- suspends PID, marks objects reachable from the GC roots, writes "type\tcount\tbytes" lines.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using Microsoft.Diagnostics.Runtime;

int pid = int.Parse(args[0]);
using var dt = DataTarget.AttachToProcess(pid, suspend: true);
var rt = dt.ClrVersions[0].CreateRuntime();
var heap = rt.Heap;
if (args[1] == "--fields") { Fields.Print(heap, args[2..]); return; }
var seen = new HashSet<ulong>();
var stack = new Stack<ulong>();
foreach (var root in heap.EnumerateRoots())
{
    if (root.Object.Address != 0 && seen.Add(root.Object.Address)) stack.Push(root.Object.Address);
}
var stats = new Dictionary<string, (long count, long bytes)>();
while (stack.Count > 0)
{
    var addr = stack.Pop();
    var obj = heap.GetObject(addr);
    if (!obj.IsValid || obj.Type == null) continue;
    string name = obj.Type.Name ?? "?";
    ulong size = obj.Size;
    if (obj.Type.IsArray && name.EndsWith("[]") && size >= 4096) name += " (>=4KB)";
    stats.TryGetValue(name, out var s);
    stats[name] = (s.count + 1, s.bytes + (long)size);
    foreach (var r in obj.EnumerateReferenceAddresses(false, true))
    {
        if (r != 0 && seen.Add(r)) stack.Push(r);
    }
}
using var w = new StreamWriter(args[1]);
foreach (var kv in stats.OrderByDescending(k => k.Value.bytes))
    w.WriteLine($"{kv.Key}\t{kv.Value.count}\t{kv.Value.bytes}");
Console.WriteLine($"objects {stats.Values.Sum(v => v.count)} bytes {stats.Values.Sum(v => v.bytes)}");
