using System.Net;
using System.Net.Sockets;

namespace Broker.TestKit;

/// <summary>Port helpers for tests (loopback only).</summary>
public static class Ports
{
    // Below Linux's ephemeral range (32768-60999 by default), so neither a listener on port 0 nor an outgoing
    // connection is handed one of these by the kernel.
    private const int RangeStart = 20000;
    private const int RangeEnd = 32000;

    // A reservation older than this is stale even if its process lives: a test holds its port for seconds.
    private static readonly TimeSpan ReservationLifetime = TimeSpan.FromMinutes(10);

    private static readonly string ReservationDirectory = Path.Combine(Path.GetTempPath(), "broker-test-ports");

    /// <summary>
    /// A port free on 127.0.0.1 and reserved for this process for ten minutes. Ports come from below the kernel's
    /// ephemeral range and are reserved across processes with a file per port, because test assemblies run side by
    /// side: a port that was merely free a moment ago (bind to 0, then close) is the next one the kernel hands to
    /// another process's listener on port 0 or its next <c>GetFreePort</c>, which once gave a test's monitor port to
    /// another test's nats-server.
    /// </summary>
    public static int GetFreePort()
    {
        Directory.CreateDirectory(ReservationDirectory);
        for (var attempt = 0; attempt < 500; attempt++)
        {
            var port = Random.Shared.Next(RangeStart, RangeEnd);
            if (TryReserve(port) && IsFree(port))
            {
                return port;
            }
        }

        throw new InvalidOperationException($"no free port between {RangeStart} and {RangeEnd} after 500 tries (reservations in {ReservationDirectory})");
    }

    private static bool TryReserve(int port)
    {
        var path = Path.Combine(ReservationDirectory, port.ToString(System.Globalization.CultureInfo.InvariantCulture));
        for (var round = 0; round < 2; round++)
        {
            try
            {
                using var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None);
                file.Write(System.Text.Encoding.ASCII.GetBytes(Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture)));
                return true;
            }
            catch (IOException) when (round == 0 && IsStale(path))
            {
                // Two processes may both find it stale; only one of them creates it afresh.
                File.Delete(path);
            }
            catch (IOException)
            {
                return false;
            }
            catch (UnauthorizedAccessException)
            {
                return false;
            }
        }

        return false;
    }

    private static bool IsStale(string path)
    {
        try
        {
            if (DateTime.UtcNow - File.GetLastWriteTimeUtc(path) > ReservationLifetime)
            {
                return true;
            }

            var owner = int.Parse(File.ReadAllText(path), System.Globalization.CultureInfo.InvariantCulture);
            return !Directory.Exists("/proc/" + owner.ToString(System.Globalization.CultureInfo.InvariantCulture)) && OperatingSystem.IsLinux();
        }
        catch (Exception exception) when (exception is IOException or FormatException or UnauthorizedAccessException)
        {
            // Being written by its owner right now, or gone: not stale.
            return false;
        }
    }

    private static bool IsFree(int port)
    {
        try
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            socket.Bind(new IPEndPoint(IPAddress.Loopback, port));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Whether something accepts TCP connections on 127.0.0.1:<paramref name="port"/> now.</summary>
    public static bool Accepts(int port)
    {
        try
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            socket.Connect(IPAddress.Loopback, port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Waits until something accepts TCP connections on 127.0.0.1:<paramref name="port"/>.</summary>
    public static async Task WaitUntilListeningAsync(int port, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                await socket.ConnectAsync(IPAddress.Loopback, port).ConfigureAwait(false);
                return;
            }
            catch (SocketException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(50).ConfigureAwait(false);
            }
        }
    }
}
