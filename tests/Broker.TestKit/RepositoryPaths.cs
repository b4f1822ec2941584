namespace Broker.TestKit;

/// <summary>Locates files of the repository (interop scripts, C sources) from a test's output folder.</summary>
public static class RepositoryPaths
{
    private static readonly Lazy<string> RootPath = new(FindRoot);

    /// <summary>The folder holding <c>Broker.sln</c>.</summary>
    public static string Root => RootPath.Value;

    /// <summary>A path under the repository root, e.g. <c>Combine("tests", "interop", "js")</c>.</summary>
    public static string Combine(params string[] parts) => Path.Combine([Root, .. parts]);

    private static string FindRoot()
    {
        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "Broker.sln")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException("Broker.sln not found above " + AppContext.BaseDirectory);
    }
}
