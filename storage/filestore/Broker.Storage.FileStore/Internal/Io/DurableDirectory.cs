namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// Directories whose existence survives a power cut: the stream's folders and each consumer's are created this way, so
/// a recovered store never finds a file whose directory entry was lost.
/// </summary>
internal static class DurableDirectory
{
    /// <summary>Creates a directory and makes its entry (and each new parent's) durable.</summary>
    public static void Create(IStorageFileSystem fs, string path)
    {
        var missing = new Stack<string>();
        for (var current = path; !string.IsNullOrEmpty(current) && !fs.DirectoryExists(current); current = Path.GetDirectoryName(current))
        {
            missing.Push(current);
        }

        fs.CreateDirectory(path);
        while (missing.Count > 0)
        {
            var created = missing.Pop();
            var parent = Path.GetDirectoryName(created);
            if (!string.IsNullOrEmpty(parent))
            {
                fs.SyncDirectory(parent);
            }
        }
    }
}
