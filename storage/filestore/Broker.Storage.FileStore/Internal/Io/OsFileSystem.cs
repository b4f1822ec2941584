using Microsoft.Win32.SafeHandles;

namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>The real file system: pread/pwrite through <see cref="RandomAccess"/>, fdatasync and directory fsync on Linux.</summary>
internal sealed class OsFileSystem : IStorageFileSystem
{
    public static OsFileSystem Instance { get; } = new();

    public bool FileExists(string path) => File.Exists(path);

    public bool DirectoryExists(string path) => Directory.Exists(path);

    public void CreateDirectory(string path) => Directory.CreateDirectory(path);

    public IStorageFile Open(string path, bool create)
    {
        var handle = File.OpenHandle(path, create ? FileMode.OpenOrCreate : FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite | FileShare.Delete);
        return new OsFile(handle);
    }

    public byte[]? ReadAll(string path)
    {
        try
        {
            return File.ReadAllBytes(path);
        }
        catch (FileNotFoundException)
        {
            return null;
        }
        catch (DirectoryNotFoundException)
        {
            return null;
        }
    }

    public void DeleteFile(string path) => File.Delete(path);

    public void DeleteDirectory(string path)
    {
        if (Directory.Exists(path))
        {
            Directory.Delete(path, recursive: true);
        }
    }

    public void Rename(string source, string destination) => File.Move(source, destination, overwrite: true);

    public void RenameDirectory(string source, string destination) => Directory.Move(source, destination);

    public void SyncDirectory(string path)
    {
        if (!NativeFile.IsLinux)
        {
            // NTFS and APFS journal their metadata; there is no portable directory sync.
            return;
        }

        var error = NativeFile.SyncDirectory(path);
        if (error != 0)
        {
            throw new IOException($"fsync of directory {path} failed: errno {error}");
        }
    }

    public IReadOnlyList<string> ListFiles(string directory) =>
        Directory.Exists(directory) ? [.. Directory.EnumerateFiles(directory).Select(Path.GetFileName).OfType<string>()] : [];

    public IReadOnlyList<string> ListDirectories(string directory) =>
        Directory.Exists(directory) ? [.. Directory.EnumerateDirectories(directory).Select(Path.GetFileName).OfType<string>()] : [];

    private sealed class OsFile(SafeFileHandle handle) : IStorageFile
    {
        private bool canAllocate = NativeFile.IsLinux;

        public long Length => RandomAccess.GetLength(handle);

        public int Read(Span<byte> buffer, long offset)
        {
            var total = 0;
            while (total < buffer.Length)
            {
                var read = RandomAccess.Read(handle, buffer[total..], offset + total);
                if (read == 0)
                {
                    break;
                }

                total += read;
            }

            return total;
        }

        public void Write(ReadOnlySpan<byte> data, long offset) => RandomAccess.Write(handle, data, offset);

        public void SetLength(long length) => RandomAccess.SetLength(handle, length);

        public void Preallocate(long length)
        {
            if (!canAllocate || length <= Length)
            {
                return;
            }

            if (NativeFile.Allocate(handle, length) != 0)
            {
                // Some file systems (tmpfs on old kernels, network mounts) refuse; appends still work, only slower to sync.
                canAllocate = false;
            }
        }

        public void Sync()
        {
            if (NativeFile.IsLinux)
            {
                var error = NativeFile.DataSync(handle);
                if (error != 0)
                {
                    throw new IOException($"fdatasync failed: errno {error}");
                }

                return;
            }

            RandomAccess.FlushToDisk(handle);
        }

        public void Dispose() => handle.Dispose();
    }
}
