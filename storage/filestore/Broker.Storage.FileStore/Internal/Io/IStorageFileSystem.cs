namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// The file operations the store uses, and nothing else, so that tests can put a fault-injecting layer underneath
/// (a simulated disk that forgets whatever was not synced, as RocksDB's FaultInjectionTestFS and TigerBeetle's
/// simulated storage do). The rules the store follows, which the simulated disk enforces: data written to a file is
/// durable only after <see cref="IStorageFile.Sync"/>; a file created, renamed or deleted is durable only after
/// <see cref="SyncDirectory"/> of its parent directory.
/// </summary>
internal interface IStorageFileSystem
{
    bool FileExists(string path);

    bool DirectoryExists(string path);

    /// <summary>Creates the directory and any missing parents (not durable until each parent is synced).</summary>
    void CreateDirectory(string path);

    /// <summary>Opens a file for reading and writing, creating it when <paramref name="create"/>.</summary>
    /// <exception cref="FileNotFoundException">It does not exist and <paramref name="create"/> is false.</exception>
    IStorageFile Open(string path, bool create);

    /// <summary>Reads a whole (small) file; <see langword="null"/> when it does not exist.</summary>
    byte[]? ReadAll(string path);

    void DeleteFile(string path);

    /// <summary>Deletes a directory and everything under it.</summary>
    void DeleteDirectory(string path);

    /// <summary>Renames a file, replacing the target atomically.</summary>
    void Rename(string source, string destination);

    /// <summary>Renames a directory with everything under it (the target must not exist; durable once its parent is synced).</summary>
    void RenameDirectory(string source, string destination);

    /// <summary>Makes the entries of a directory (creations, renames, deletions) durable.</summary>
    void SyncDirectory(string path);

    /// <summary>Names (not paths) of the files in a directory.</summary>
    IReadOnlyList<string> ListFiles(string directory);

    /// <summary>Names (not paths) of the sub-directories of a directory.</summary>
    IReadOnlyList<string> ListDirectories(string directory);
}

/// <summary>An open file, read and written at explicit offsets (pread/pwrite); safe for one writer and concurrent readers.</summary>
internal interface IStorageFile : IDisposable
{
    long Length { get; }

    /// <summary>Reads up to <c>buffer.Length</c> bytes at <paramref name="offset"/>; fewer only at the end of the file.</summary>
    int Read(Span<byte> buffer, long offset);

    void Write(ReadOnlySpan<byte> data, long offset);

    void SetLength(long length);

    /// <summary>
    /// Reserves disk space up to <paramref name="length"/> and makes the file that long (zeros), so later writes
    /// inside it change no file metadata and a data sync is cheaper. Best effort: does nothing where unsupported.
    /// </summary>
    void Preallocate(long length);

    /// <summary>Makes the data written so far (and the length) durable: fdatasync.</summary>
    void Sync();
}
