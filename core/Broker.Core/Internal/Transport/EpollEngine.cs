using System.Runtime.InteropServices;

namespace Broker.Core.Internal.Transport;

/// <summary>
/// The process's epoll set for on-demand connections (<see cref="EpollSocket"/>, issue 25): one dedicated thread waits
/// in <c>epoll_wait</c> and hands each readiness to the socket it names, which queues its own work item to the thread
/// pool, or, for a receive that asked for it, makes the receive on this thread (<see cref="EpollSocket"/>'s remarks). The runtime's <c>Socket</c> keeps per socket an
/// <c>AwaitableSocketAsyncEventArgs</c>, a <c>SocketAsyncContext</c> with its operations and an engine registration
/// (about 1.1 KB) from its first asynchronous receive; a socket read here never makes them.
/// </summary>
/// <remarks>
/// An event finds its socket without a GC handle or a dictionary entry: its 64-bit data is the descriptor (an index
/// into <see cref="sockets"/>, one reference per descriptor number) and the socket's <see cref="EpollSocket.Key"/>,
/// which tells a registration whose descriptor was closed and reused from the current one. Chosen once per process:
/// <see cref="Shared"/> is null off Linux, when <c>epoll_create1</c> fails, or when the environment variable
/// <c>BROKER_EPOLL_TRANSPORT</c> is <c>0</c> or <c>false</c> (default: on), and the runtime's socket path is used.
/// </remarks>
internal sealed unsafe class EpollEngine
{
    /// <summary>The environment variable that turns this transport off (<c>0</c> or <c>false</c>; default on).</summary>
    public const string SwitchVariable = "BROKER_EPOLL_TRANSPORT";

    /// <summary>
    /// The environment variable that makes every readiness go to a worker (<c>0</c> or <c>false</c>; default: a receive
    /// that asks for it is made on the engine's thread, <see cref="EpollSocket.ReceiveAsync"/>). Read once per process;
    /// for comparing the two on one build (docs/benchmarks.md "ws3"). Not <c>BROKER_</c>-prefixed: the host reads those
    /// as its configuration and refuses unknown ones.
    /// </summary>
    public const string InlineVariable = "EPOLL_INLINE_RECEIVES";

    private const int MaxEvents = 256;

    private static readonly Lazy<EpollEngine?> shared = new(Create);

    private readonly int epfd;
    private readonly Lock growing = new();
    // Indexed by descriptor: the socket registered under it, or null.
    private EpollSocket?[] sockets = new EpollSocket?[1024];
    private int nextKey;

    private EpollEngine(int epfd)
    {
        this.epfd = epfd;
        ReceivesHere = !IsOff(Environment.GetEnvironmentVariable(InlineVariable));
        var thread = new Thread(Run) { IsBackground = true, Name = "epoll" };
        thread.UnsafeStart();
    }

    /// <summary>The process's engine, or null when on-demand connections use the runtime's sockets.</summary>
    public static EpollEngine? Shared => shared.Value;

    internal int Descriptor => epfd;

    /// <summary>Whether a receive may ask to be made on this engine's thread (<see cref="InlineVariable"/>).</summary>
    internal bool ReceivesHere { get; }

    /// <summary>A key for a new registration (never 0).</summary>
    internal int NextKey()
    {
        int key;
        do
        {
            key = Interlocked.Increment(ref nextKey);
        }
        while (key == 0);
        return key;
    }

    /// <summary>Puts <paramref name="socket"/> in the descriptor table (before its first <c>EPOLL_CTL_ADD</c>).</summary>
    internal void Enter(int fd, EpollSocket socket)
    {
        // Once per connection, under the lock: a table being grown cannot miss it.
        lock (growing)
        {
            var table = sockets;
            if (fd >= table.Length)
            {
                var grown = new EpollSocket?[Math.Max(fd + 1, table.Length * 2)];
                Array.Copy(table, grown, table.Length);
                Volatile.Write(ref sockets, grown);
                table = grown;
            }

            Volatile.Write(ref table[fd], socket);
        }
    }

    /// <summary>Takes <paramref name="socket"/> out of the table if it is still the one under its descriptor.</summary>
    internal void Leave(int fd, EpollSocket socket)
    {
        lock (growing)
        {
            var table = sockets;
            if (fd < table.Length)
            {
                Interlocked.CompareExchange(ref table[fd], null, socket);
            }
        }
    }

    private static EpollEngine? Create()
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }

        if (IsOff(Environment.GetEnvironmentVariable(SwitchVariable)))
        {
            return null;
        }

        try
        {
            var fd = EpollInterop.EpollCreate1(EpollInterop.EpollCloexec);
            return fd < 0 ? null : new EpollEngine(fd);
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            return null;
        }
    }

    private void Run()
    {
        var size = EpollInterop.EventSize;
        var offset = EpollInterop.DataOffset;
        var events = (byte*)NativeMemory.Alloc((nuint)(MaxEvents * size));
        while (true)
        {
            var count = EpollInterop.EpollWait(epfd, events, MaxEvents, -1);
            if (count < 0)
            {
                // EINTR (a signal, a debugger attaching): wait again. Nothing else is expected of a valid set.
                continue;
            }

            var table = Volatile.Read(ref sockets);
            for (var i = 0; i < count; i++)
            {
                var entry = events + (i * size);
                var mask = *(uint*)entry;
                var data = *(ulong*)(entry + offset);
                var fd = (int)(uint)data;
                var key = (int)(data >> 32);
                var socket = Find(table, fd, key);
                if (socket is null && !ReferenceEquals(table, Volatile.Read(ref sockets)))
                {
                    // Entered after the table this pass read was replaced by a larger one.
                    table = Volatile.Read(ref sockets);
                    socket = Find(table, fd, key);
                }

                socket?.OnEvents((int)mask);
            }
        }
    }

    private static bool IsOff(string? setting)
        => setting is not null && (setting == "0" || setting.Equals("false", StringComparison.OrdinalIgnoreCase));

    private static EpollSocket? Find(EpollSocket?[] table, int fd, int key)
        => fd < table.Length && Volatile.Read(ref table[fd]) is { } socket && socket.Key == key ? socket : null;
}
