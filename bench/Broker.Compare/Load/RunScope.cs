using System.Net.Sockets;

namespace Broker.Compare.Load;

/// <summary>
/// The sockets and threads of one workload run. Threads run the connection loops; the scope joins them with a
/// deadline and, when the run is cancelled or times out, closes every socket so blocked threads return at once.
/// The first failure of any thread is the run's failure.
/// </summary>
internal sealed class RunScope : IDisposable
{
    private readonly List<Socket> sockets = [];
    private readonly List<Thread> threads = [];
    private readonly CancellationTokenRegistration registration;
    private Exception? failure;
    private int closed;

    public RunScope(CancellationToken cancellationToken)
    {
        registration = cancellationToken.Register(CloseAll);
        CancellationToken = cancellationToken;
    }

    public CancellationToken CancellationToken { get; }

    public void Track(Socket socket)
    {
        lock (sockets)
        {
            sockets.Add(socket);
        }

        if (Volatile.Read(ref closed) != 0)
        {
            socket.Dispose();
        }
    }

    /// <summary>Starts <paramref name="body"/> on a dedicated thread; an exception fails the run and closes every socket.</summary>
    public void Start(string name, Action body)
    {
        var thread = new Thread(() =>
        {
            try
            {
                body();
            }
#pragma warning disable CA1031 // Any failure of a connection loop fails the run; it is rethrown by Join.
            catch (Exception ex)
#pragma warning restore CA1031
            {
                Interlocked.CompareExchange(ref failure, ex, null);
                CloseAll();
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        threads.Add(thread);
        thread.Start();
    }

    /// <summary>Waits for every thread; throws the first failure, or a timeout after <paramref name="timeout"/>.</summary>
    public void Join(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        foreach (var thread in threads)
        {
            var left = deadline - DateTime.UtcNow;
            if (!thread.Join(left > TimeSpan.Zero ? left : TimeSpan.Zero))
            {
                CloseAll();
                thread.Join(NatsSocket.IoTimeout);
                Interlocked.CompareExchange(ref failure, new TimeoutException($"The run did not finish within {timeout.TotalSeconds:0} s."), null);
            }
        }

        CancellationToken.ThrowIfCancellationRequested();
        if (failure is { } error)
        {
            throw new InvalidOperationException(error.Message, error);
        }
    }

    public void Dispose()
    {
        registration.Dispose();
        CloseAll();
    }

    private void CloseAll()
    {
        Volatile.Write(ref closed, 1);
        Socket[] all;
        lock (sockets)
        {
            all = [.. sockets];
        }

        foreach (var socket in all)
        {
            socket.Dispose();
        }
    }
}
