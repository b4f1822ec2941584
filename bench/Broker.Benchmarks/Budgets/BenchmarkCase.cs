using System.Globalization;
using System.Reflection;
using BenchmarkDotNet.Attributes;

namespace Broker.Benchmarks.Budgets;

/// <summary>
/// One benchmark method with one combination of its class's <c>[Params]</c>, named as BenchmarkDotNet names it
/// (<c>Class.Method(Param=Value)</c>). The allocation budget test runs the same method bodies BenchmarkDotNet runs.
/// </summary>
internal sealed class BenchmarkCase
{
    private BenchmarkCase(Type type, MethodInfo method, IReadOnlyList<(PropertyInfo Property, object? Value)> parameters, int operationsPerInvoke)
    {
        Type = type;
        Method = method;
        Parameters = parameters;
        OperationsPerInvoke = operationsPerInvoke;
        var name = type.Name + "." + method.Name;
        Id = parameters.Count == 0
            ? name
            : name + "(" + string.Join(", ", parameters.Select(p => p.Property.Name + "=" + Convert.ToString(p.Value, CultureInfo.InvariantCulture))) + ")";
    }

    public string Id { get; }

    public Type Type { get; }

    public MethodInfo Method { get; }

    public IReadOnlyList<(PropertyInfo Property, object? Value)> Parameters { get; }

    public int OperationsPerInvoke { get; }

    public override string ToString() => Id;

    /// <summary>Every benchmark case in <paramref name="assembly"/>: classes by name, methods and parameters in declaration order.</summary>
    public static IReadOnlyList<BenchmarkCase> Discover(Assembly assembly)
    {
        ArgumentNullException.ThrowIfNull(assembly);
        return [.. assembly.GetTypes().Where(t => t.IsPublic && !t.IsAbstract).OrderBy(t => t.Name, StringComparer.Ordinal).SelectMany(Discover)];
    }

    /// <summary>The benchmark cases of one class (none when it has no <c>[Benchmark]</c> method).</summary>
    public static IReadOnlyList<BenchmarkCase> Discover(Type type)
    {
        ArgumentNullException.ThrowIfNull(type);
        var methods = type.GetMethods(BindingFlags.Public | BindingFlags.Instance)
            .Select(m => (Method: m, Attribute: m.GetCustomAttribute<BenchmarkAttribute>()))
            .Where(m => m.Attribute is not null)
            .ToList();
        var cases = new List<BenchmarkCase>();
        if (methods.Count == 0)
        {
            return cases;
        }

        foreach (var combination in ParameterCombinations(type))
        {
            foreach (var (method, attribute) in methods)
            {
                cases.Add(new BenchmarkCase(type, method, combination, attribute!.OperationsPerInvoke));
            }
        }

        return cases;
    }

    /// <summary>Creates the benchmark object with this case's parameters and runs its <c>[GlobalSetup]</c>.</summary>
    public object CreateAndSetUp()
    {
        var instance = Activator.CreateInstance(Type)!;
        foreach (var (property, value) in Parameters)
        {
            property.SetValue(instance, value);
        }

        InvokeMarked<GlobalSetupAttribute>(instance);
        return instance;
    }

    /// <summary>Runs the object's <c>[GlobalCleanup]</c>.</summary>
    public void CleanUp(object instance) => InvokeMarked<GlobalCleanupAttribute>(instance);

    /// <summary>
    /// A direct delegate to the benchmark method: calling it allocates nothing itself, unlike reflection.
    /// Benchmark methods return <see cref="long"/> (so their work cannot be optimised away) or nothing.
    /// </summary>
    public Action CreateInvoker(object instance)
    {
        if (Method.ReturnType == typeof(long))
        {
            var call = Method.CreateDelegate<Func<long>>(instance);
            return () => Volatile.Write(ref sink, call());
        }

        if (Method.ReturnType == typeof(void))
        {
            return Method.CreateDelegate<Action>(instance);
        }

        throw new InvalidOperationException($"{Id} returns {Method.ReturnType.Name}; benchmarks here return long or void.");
    }

    // Keeps results alive so the JIT cannot drop a benchmark's work.
    private static long sink;

    private void InvokeMarked<TAttribute>(object instance)
        where TAttribute : Attribute
    {
        foreach (var method in Type.GetMethods(BindingFlags.Public | BindingFlags.Instance))
        {
            if (method.GetCustomAttribute<TAttribute>() is not null)
            {
                method.Invoke(instance, null);
            }
        }
    }

    private static IEnumerable<IReadOnlyList<(PropertyInfo, object?)>> ParameterCombinations(Type type)
    {
        IEnumerable<IReadOnlyList<(PropertyInfo, object?)>> combinations = [[]];
        foreach (var property in type.GetProperties(BindingFlags.Public | BindingFlags.Instance))
        {
            if (property.GetCustomAttribute<ParamsAttribute>() is not { } values)
            {
                continue;
            }

            combinations = combinations.SelectMany(existing => values.Values.Select(value => (IReadOnlyList<(PropertyInfo, object?)>)[.. existing, (property, value)])).ToList();
        }

        return combinations;
    }
}
