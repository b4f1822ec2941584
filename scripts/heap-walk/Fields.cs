using System;
using System.Linq;
using Microsoft.Diagnostics.Runtime;
static class Fields
{
    // walk PID --fields TYPE...: the instance fields (offset, size, type) of the first object of each type.
    public static void Print(ClrHeap heap, string[] names)
    {
        foreach (var name in names)
        {
            var obj = heap.EnumerateObjects().FirstOrDefault(o => o.Type?.Name == name);
            if (obj.Address == 0) { Console.WriteLine($"{name}: none"); continue; }
            Console.WriteLine($"{name}: {obj.Size} B");
            foreach (var f in obj.Type.Fields.OrderBy(f => f.Offset))
            {
                string val = "";
                if (f.IsObjectReference) { var r = f.ReadObject(obj.Address, false); val = r.Address == 0 ? "null" : r.Type?.Name ?? "?"; }
                Console.WriteLine($"  {f.Offset,4} {f.Size,3} {f.Name} : {f.Type?.Name} {val}");
            }
        }
    }
}
