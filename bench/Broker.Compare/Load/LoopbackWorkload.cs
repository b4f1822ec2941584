using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace Broker.Compare.Load;

/// <summary>
/// The physical limit: raw TCP throughput between two sockets of this process over loopback, one thread writing
/// 16 KiB blocks and one reading them, with no broker in between. No server row can move payload bytes faster
/// than this on the same machine. Units: 16 KiB writes.
/// </summary>
internal sealed class LoopbackWorkload : IWorkload
{
    public const int BlockSize = 16 * 1024;

    private const int ReceiveBufferSize = 256 * 1024;

    public long CalibrationCount => 20_000;

    public long SmokeCount => 200;

    public Measurement Run(NatsEndpoint server, long count, string subject, CancellationToken cancellationToken)
    {
        using var scope = new RunScope(cancellationToken);
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var sender = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        scope.Track(sender);
        sender.Connect(listener.LocalEndPoint!);
        var receiver = listener.Accept();
        scope.Track(receiver);
        receiver.ReceiveTimeout = (int)NatsSocket.IoTimeout.TotalMilliseconds;
        sender.SendTimeout = (int)NatsSocket.IoTimeout.TotalMilliseconds;

        var total = count * BlockSize;
        long finishedAt = 0;
        using var go = new ManualResetEventSlim();
        scope.Start("loopback-receive", () =>
        {
            var buffer = new byte[ReceiveBufferSize];
            long received = 0;
            while (received < total)
            {
                var n = receiver.Receive(buffer);
                if (n == 0)
                {
                    throw new IOException("The loopback sender closed early.");
                }

                received += n;
            }

            finishedAt = Stopwatch.GetTimestamp();
        });
        scope.Start("loopback-send", () =>
        {
            var block = new byte[BlockSize];
            go.Wait(scope.CancellationToken);
            for (long i = 0; i < count; i++)
            {
                var span = block.AsSpan();
                while (!span.IsEmpty)
                {
                    span = span[sender.Send(span)..];
                }
            }
        });

        var start = Stopwatch.GetTimestamp();
        go.Set();
        scope.Join(WorkloadTiming.RunTimeout);
        return new Measurement(count, total, WorkloadTiming.Between(start, finishedAt));
    }
}
