using System.Text.Json;

namespace Broker.Benchmarks.Budgets;

/// <summary>
/// The allowed bytes per operation of every benchmark case, from <c>allocation-budgets.json</c> (a JSON object of
/// case id → bytes; comments allowed). Steady-state parse, match and delivery must stay at 0.
/// </summary>
internal static class AllocationBudgets
{
    public const string FileName = "allocation-budgets.json";

    /// <summary>The budgets file copied beside the benchmark assembly.</summary>
    public static string DefaultPath => Path.Combine(AppContext.BaseDirectory, FileName);

    public static IReadOnlyDictionary<string, long> Load(string? path = null)
    {
        var json = File.ReadAllBytes(path ?? DefaultPath);
        using var document = JsonDocument.Parse(json, new JsonDocumentOptions { CommentHandling = JsonCommentHandling.Skip, AllowTrailingCommas = true });
        var budgets = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var property in document.RootElement.GetProperty("budgets").EnumerateObject())
        {
            budgets.Add(property.Name, property.Value.GetInt64());
        }

        return budgets;
    }
}
