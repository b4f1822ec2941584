namespace Broker.TestKit;

/// <summary>A temporary folder (created empty under the system's temp path) removed with everything in it after the test.</summary>
public sealed class TempDirectory : IDisposable
{
    /// <param name="prefix">The start of the folder's name, to tell whose it is when one is left behind.</param>
    public TempDirectory(string prefix = "broker-tests-")
    {
        Path = Directory.CreateTempSubdirectory(prefix).FullName;
    }

    public string Path { get; }

    /// <summary>Writes <paramref name="content"/> to <paramref name="relativePath"/> in the folder; returns the full path.</summary>
    public string Write(string relativePath, string content)
    {
        var full = System.IO.Path.Combine(Path, relativePath);
        Directory.CreateDirectory(System.IO.Path.GetDirectoryName(full)!);
        File.WriteAllText(full, content);
        return full;
    }

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}
