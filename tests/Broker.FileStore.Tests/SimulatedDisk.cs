using Broker.Storage.FileStore.Internal.Io;

namespace Broker.FileStore.Tests;

/// <summary>What survives a simulated power cut besides what was synced.</summary>
public enum PowerCutMode
{
    /// <summary>Exactly what was fsynced (file data) and what directory fsyncs made durable (entries).</summary>
    DropUnsynced,

    /// <summary>As <see cref="DropUnsynced"/>, plus a random prefix of each file's unsynced appended bytes, its last page torn into garbage.</summary>
    TornTail,

    /// <summary>As <see cref="DropUnsynced"/>, plus random 4 KiB pages of the unsynced bytes (the page cache wrote back some, out of order).</summary>
    RandomPages,
}

/// <summary>
/// An in-memory file system under the store that behaves like a disk with a volatile page cache, in the spirit of
/// RocksDB's FaultInjectionTestFS and TigerBeetle's simulated storage: file data is durable only once the file is
/// synced, and a created, renamed or deleted directory entry only once its directory is synced. <see cref="PowerCut"/>
/// returns a new disk holding only the durable state (optionally with torn or partially written-back unsynced data);
/// <see cref="ProcessCrash"/> returns one holding everything written (a kill -9: the page cache survives). Either way
/// this instance dies: every later call throws, as the old process's writes would never happen.
/// </summary>
internal sealed class SimulatedDisk : IStorageFileSystem
{
    private readonly object sync;
    private readonly State state;
    private bool dead;
    private int openFiles;
    private int directoriesDeleted;

    public SimulatedDisk(string root)
        : this(new State(root), new object())
    {
    }

    private SimulatedDisk(State state, object sync)
    {
        this.state = state;
        this.sync = sync;
    }

    /// <summary>Fsyncs (file and directory) performed.</summary>
    public long Syncs => state.Syncs;

    /// <summary>Files opened through this instance and not yet disposed (a process's open descriptors).</summary>
    public int OpenFiles => Volatile.Read(ref openFiles);

    /// <summary>Bytes read through this instance (recovery cost).</summary>
    public long BytesRead { get; private set; }

    /// <summary>Makes every further sync fail with an I/O error (a dying disk).</summary>
    public bool FailSyncs { get; set; }

    public SimulatedDisk PowerCut(PowerCutMode mode = PowerCutMode.DropUnsynced, int seed = 1)
    {
        lock (sync)
        {
            dead = true;
            return new SimulatedDisk(state.AfterPowerCut(mode, new Random(seed)), new object());
        }
    }

    public SimulatedDisk ProcessCrash()
    {
        lock (sync)
        {
            dead = true;
            return new SimulatedDisk(state.AfterProcessCrash(), new object());
        }
    }

    /// <summary>The current bytes of a file (test inspection and tampering).</summary>
    public byte[] ReadFile(string path)
    {
        lock (sync)
        {
            return state.Files[path].Data.AsSpan(0, state.Files[path].Length).ToArray();
        }
    }

    /// <summary>Replaces a file's bytes, durably (tampering as if on the platter).</summary>
    public void WriteFileDurably(string path, byte[] contents)
    {
        lock (sync)
        {
            var inode = state.Files[path];
            inode.Data = (byte[])contents.Clone();
            inode.Length = contents.Length;
            inode.Durable = (byte[])contents.Clone();
        }
    }

    public IReadOnlyList<string> AllFiles()
    {
        lock (sync)
        {
            return [.. state.Files.Keys.Order(StringComparer.Ordinal)];
        }
    }

    public bool FileExists(string path)
    {
        lock (sync)
        {
            Alive();
            return state.Files.ContainsKey(Normal(path));
        }
    }

    public bool DirectoryExists(string path)
    {
        lock (sync)
        {
            Alive();
            return state.Directories.Contains(Normal(path));
        }
    }

    public void CreateDirectory(string path)
    {
        lock (sync)
        {
            Alive();
            for (var current = Normal(path); current.Length > state.Root.Length && state.Directories.Add(current); current = Parent(current))
            {
            }
        }
    }

    public IStorageFile Open(string path, bool create)
    {
        lock (sync)
        {
            Alive();
            path = Normal(path);
            if (!state.Directories.Contains(Parent(path)))
            {
                throw new DirectoryNotFoundException(Parent(path));
            }

            if (!state.Files.TryGetValue(path, out var inode))
            {
                if (!create)
                {
                    throw new FileNotFoundException(path);
                }

                inode = new Inode();
                state.Files[path] = inode;
            }

            Interlocked.Increment(ref openFiles);
            return new SimulatedFile(this, inode);
        }
    }

    public byte[]? ReadAll(string path)
    {
        lock (sync)
        {
            Alive();
            if (!state.Files.TryGetValue(Normal(path), out var inode))
            {
                return null;
            }

            BytesRead += inode.Length;
            return inode.Data.AsSpan(0, inode.Length).ToArray();
        }
    }

    public void DeleteFile(string path)
    {
        lock (sync)
        {
            Alive();
            state.Files.Remove(Normal(path));
        }
    }

    public void DeleteDirectory(string path)
    {
        BeforeDeleteDirectory?.Invoke(path);
        lock (sync)
        {
            Interlocked.Increment(ref directoriesDeleted);
            Alive();
            path = Normal(path);
            foreach (var file in state.Files.Keys.Where(f => f.StartsWith(path + "/", StringComparison.Ordinal)).ToList())
            {
                state.Files.Remove(file);
            }

            state.Directories.RemoveWhere(d => d == path || d.StartsWith(path + "/", StringComparison.Ordinal));
        }
    }

    public void Rename(string source, string destination)
    {
        lock (sync)
        {
            Alive();
            source = Normal(source);
            destination = Normal(destination);
            var inode = state.Files[source];
            state.Files.Remove(source);
            state.Files[destination] = inode;
        }
    }

    /// <summary>Runs before each directory deletion, outside the disk's lock (a test holds one there).</summary>
    public Action<string>? BeforeDeleteDirectory { get; set; }

    /// <summary>Directories deleted (a process's rmdir of a tree).</summary>
    public int DirectoriesDeleted => Volatile.Read(ref directoriesDeleted);

    public void RenameDirectory(string source, string destination)
    {
        lock (sync)
        {
            Alive();
            source = Normal(source);
            destination = Normal(destination);
            if (!state.Directories.Contains(source) || state.Directories.Contains(destination) || state.Files.ContainsKey(destination))
            {
                throw new IOException($"simulated: cannot rename {source} to {destination}");
            }

            foreach (var file in state.Files.Keys.Where(f => f.StartsWith(source + "/", StringComparison.Ordinal)).ToList())
            {
                state.Files[destination + file[source.Length..]] = state.Files[file];
                state.Files.Remove(file);
            }

            foreach (var directory in state.Directories.Where(d => d == source || d.StartsWith(source + "/", StringComparison.Ordinal)).ToList())
            {
                state.Directories.Remove(directory);
                state.Directories.Add(destination + directory[source.Length..]);
            }

            // The moved directories keep their durable entries (their inodes move); the old names keep theirs too, for a
            // power cut before the parent's sync, when the parent still lists the old name.
            foreach (var (directory, entries) in state.DurableEntries.Where(e => e.Key == source || e.Key.StartsWith(source + "/", StringComparison.Ordinal)).ToList())
            {
                state.DurableEntries[destination + directory[source.Length..]] = entries;
            }
        }
    }

    /// <summary>Runs before each directory sync, outside the disk's lock (a test holds a sync there to see who waits behind it).</summary>
    public Action<string>? BeforeSyncDirectory { get; set; }

    public void SyncDirectory(string path)
    {
        BeforeSyncDirectory?.Invoke(path);
        lock (sync)
        {
            Alive();
            if (FailSyncs)
            {
                throw new IOException("simulated: fsync failed (EIO)");
            }

            state.SyncDirectory(Normal(path));
        }
    }

    public IReadOnlyList<string> ListFiles(string directory)
    {
        lock (sync)
        {
            Alive();
            directory = Normal(directory);
            return [.. state.Files.Keys.Where(f => Parent(f) == directory).Select(f => f[(directory.Length + 1)..])];
        }
    }

    public IReadOnlyList<string> ListDirectories(string directory)
    {
        lock (sync)
        {
            Alive();
            directory = Normal(directory);
            return [.. state.Directories.Where(d => Parent(d) == directory).Select(d => d[(directory.Length + 1)..])];
        }
    }

    private static string Normal(string path) => path.Replace('\\', '/').TrimEnd('/');

    private static string Parent(string path)
    {
        var index = path.LastIndexOf('/');
        return index <= 0 ? "/" : path[..index];
    }

    private void Alive()
    {
        if (dead)
        {
            throw new IOException("simulated: the machine lost power");
        }
    }

    private sealed class Inode
    {
        public byte[] Data = new byte[256];
        public int Length;
        public byte[] Durable = [];
    }

    private sealed class State
    {
        public State(string root)
        {
            Root = Normal(root);
            Directories.Add(Root);
            DurableEntries[Root] = new Dictionary<string, object>(StringComparer.Ordinal);
        }

        public string Root { get; }

        public Dictionary<string, Inode> Files { get; } = new(StringComparer.Ordinal);

        public HashSet<string> Directories { get; } = new(StringComparer.Ordinal);

        /// <summary>Per directory, its entries as of its last sync: name to an inode, or to a directory marker.</summary>
        public Dictionary<string, Dictionary<string, object>> DurableEntries { get; } = new(StringComparer.Ordinal);

        public long Syncs { get; set; }

        public void SyncDirectory(string path)
        {
            Syncs++;
            var entries = new Dictionary<string, object>(StringComparer.Ordinal);
            foreach (var (file, inode) in Files)
            {
                if (Parent(file) == path)
                {
                    entries[file[(path.Length + 1)..]] = inode;
                }
            }

            foreach (var directory in Directories)
            {
                if (directory != path && Parent(directory) == path)
                {
                    entries[directory[(path.Length + 1)..]] = DirectoryMarker.Instance;
                }
            }

            DurableEntries[path] = entries;
        }

        public State AfterProcessCrash()
        {
            var next = new State(Root) { Syncs = Syncs };
            foreach (var directory in Directories)
            {
                next.Directories.Add(directory);
            }

            foreach (var (path, inode) in Files)
            {
                next.Files[path] = new Inode { Data = inode.Data.AsSpan(0, inode.Length).ToArray(), Length = inode.Length, Durable = inode.Durable };
            }

            foreach (var (path, entries) in DurableEntries)
            {
                next.DurableEntries[path] = entries;
            }

            return next;
        }

        public State AfterPowerCut(PowerCutMode mode, Random random)
        {
            var next = new State(Root) { Syncs = Syncs };
            var copies = new Dictionary<Inode, Inode>();
            Walk(Root);
            return next;

            void Walk(string directory)
            {
                if (!DurableEntries.TryGetValue(directory, out var entries))
                {
                    // Created, but its own entries never synced: it exists, empty.
                    next.DurableEntries[directory] = new Dictionary<string, object>(StringComparer.Ordinal);
                    return;
                }

                next.DurableEntries[directory] = entries;
                foreach (var (name, node) in entries)
                {
                    var path = directory + "/" + name;
                    if (node is Inode inode)
                    {
                        if (!copies.TryGetValue(inode, out var copy))
                        {
                            copy = Survivor(inode, mode, random);
                            copies[inode] = copy;
                        }

                        next.Files[path] = copy;
                    }
                    else
                    {
                        next.Directories.Add(path);
                        Walk(path);
                    }
                }
            }
        }

        private static Inode Survivor(Inode inode, PowerCutMode mode, Random random)
        {
            var durable = inode.Durable;
            var data = durable.ToList();
            var current = inode.Data.AsSpan(0, inode.Length);
            if (mode != PowerCutMode.DropUnsynced && current.Length > durable.Length)
            {
                var unsynced = current[durable.Length..].ToArray();
                if (mode == PowerCutMode.TornTail)
                {
                    var keep = random.Next(unsynced.Length + 1);
                    var torn = unsynced.AsSpan(0, keep).ToArray();
                    var garbage = Math.Min(keep, random.Next(0, 600));
                    random.NextBytes(torn.AsSpan(keep - garbage));
                    data.AddRange(torn);
                }
                else
                {
                    var pages = unsynced.ToArray();
                    for (var page = 0; page < pages.Length; page += 4096)
                    {
                        if (random.Next(2) == 0)
                        {
                            pages.AsSpan(page, Math.Min(4096, pages.Length - page)).Clear();
                        }
                    }

                    data.AddRange(pages);
                }
            }

            var array = data.ToArray();
            return new Inode { Data = array.Length == 0 ? new byte[256] : array, Length = array.Length, Durable = array };
        }
    }

    private sealed class DirectoryMarker
    {
        public static readonly DirectoryMarker Instance = new();
    }

    private sealed class SimulatedFile(SimulatedDisk disk, Inode inode) : IStorageFile
    {
        private bool disposed;

        public long Length
        {
            get
            {
                lock (disk.sync)
                {
                    disk.Alive();
                    return inode.Length;
                }
            }
        }

        public int Read(Span<byte> buffer, long offset)
        {
            lock (disk.sync)
            {
                disk.Alive();
                if (offset >= inode.Length)
                {
                    return 0;
                }

                var count = (int)Math.Min(buffer.Length, inode.Length - offset);
                disk.BytesRead += count;
                inode.Data.AsSpan((int)offset, count).CopyTo(buffer);
                return count;
            }
        }

        public void Write(ReadOnlySpan<byte> data, long offset)
        {
            lock (disk.sync)
            {
                disk.Alive();
                var end = (int)offset + data.Length;
                Grow(end);
                data.CopyTo(inode.Data.AsSpan((int)offset));
                inode.Length = Math.Max(inode.Length, end);
            }
        }

        public void SetLength(long length)
        {
            lock (disk.sync)
            {
                disk.Alive();
                Grow((int)length);
                if (length > inode.Length)
                {
                    inode.Data.AsSpan(inode.Length, (int)length - inode.Length).Clear();
                }

                inode.Length = (int)length;
            }
        }

        public void Preallocate(long length)
        {
            if (length > Length)
            {
                SetLength(length);
            }
        }

        public void Sync()
        {
            lock (disk.sync)
            {
                disk.Alive();
                if (disk.FailSyncs)
                {
                    throw new IOException("simulated: fsync failed (EIO)");
                }

                disk.state.Syncs++;
                inode.Durable = inode.Data.AsSpan(0, inode.Length).ToArray();
            }
        }

        public void Dispose()
        {
            if (!disposed)
            {
                disposed = true;
                Interlocked.Decrement(ref disk.openFiles);
            }
        }

        private void Grow(int size)
        {
            if (size > inode.Data.Length)
            {
                Array.Resize(ref inode.Data, Math.Max(size, inode.Data.Length * 2));
            }
        }
    }
}
