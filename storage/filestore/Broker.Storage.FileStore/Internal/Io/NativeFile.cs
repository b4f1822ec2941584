using System.Runtime.InteropServices;

namespace Broker.Storage.FileStore.Internal.Io;

/// <summary>
/// The POSIX calls .NET does not expose: fdatasync (cheaper than fsync: no timestamps), fsync of a directory (the
/// only way to make a created or renamed entry durable) and posix_fallocate (reserve a block's space so appends
/// inside it need no metadata journal commit on each sync). Linux only; elsewhere the callers fall back.
/// </summary>
internal static partial class NativeFile
{
    private const int ORdOnly = 0;
    private const int ODirectory = 0x10000; // Linux x86-64 and arm64 values of O_DIRECTORY differ; see DirectoryFlag.

    public static bool IsLinux { get; } = OperatingSystem.IsLinux();

    public static int DataSync(SafeHandle handle)
    {
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            return fdatasync((int)handle.DangerousGetHandle()) == 0 ? 0 : Marshal.GetLastPInvokeError();
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    public static int Allocate(SafeHandle handle, long length)
    {
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);

            // posix_fallocate returns the error number instead of setting errno.
            return posix_fallocate((int)handle.DangerousGetHandle(), 0, length);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>fsync of a directory; returns 0 or the errno.</summary>
    public static int SyncDirectory(string path)
    {
        var fd = open(path, ORdOnly | DirectoryFlag);
        if (fd < 0)
        {
            return Marshal.GetLastPInvokeError();
        }

        try
        {
            return fsync(fd) == 0 ? 0 : Marshal.GetLastPInvokeError();
        }
        finally
        {
            _ = close(fd);
        }
    }

    private static int DirectoryFlag =>
        RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm ? 0x4000 : ODirectory;

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fdatasync(int fd);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fsync(int fd);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int posix_fallocate(int fd, long offset, long length);

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int open(string path, int flags);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int close(int fd);
}
