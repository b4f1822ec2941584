// Usage: dotnet stall.dll WS_URL|TLS_URL MONITOR_URL COUNT ROUNDS (run.sh starts a server and calls it).
// Each round: a NATS.Client.Core subscriber (SubPendingChannelFullMode.Wait, as the harness's Core rows) and a
// publisher awaiting PublishAsync per 128 B message, both over the URL (tls:// skips the certificate's check); COUNT messages, then the publisher's PING. A
// round with no progress on either side for 3 s is a stall: prints both counts, /connz?subs=1 and the sockets (ss).
using System.Diagnostics;
using System.Threading.Channels;
using NATS.Client.Core;

var url = args[0];
var monitor = args[1];
var count = long.Parse(args[2]);
var rounds = int.Parse(args[3]);
NatsOpts Opts(string name) => NatsOpts.Default with
{
    Name = name, Url = url, MaxReconnectRetry = 0, ConnectTimeout = TimeSpan.FromSeconds(10),
    CommandTimeout = TimeSpan.FromSeconds(30), RequestTimeout = TimeSpan.FromSeconds(30),
    SubPendingChannelFullMode = BoundedChannelFullMode.Wait,
    TlsOpts = url.StartsWith("tls://", StringComparison.Ordinal)
        ? new NatsTlsOpts { Mode = TlsMode.Require, InsecureSkipVerify = true }
        : NatsTlsOpts.Default,
};
using var http = new HttpClient();
var port = new Uri(url).Port;
for (var round = 1; round <= rounds; round++)
{
    await using var sub = new NatsConnection(Opts("sub"));
    await sub.ConnectAsync();
    var subscription = await sub.SubscribeCoreAsync<byte[]>("bench.ws");
    await sub.PingAsync();
    await using var pub = new NatsConnection(Opts("pub"));
    await pub.ConnectAsync();
    long received = 0, published = 0;
    var payload = new byte[128];
    var watch = Stopwatch.StartNew();
    var receiving = Task.Run(async () =>
    {
        await foreach (var _ in subscription.Msgs.ReadAllAsync())
        {
            if (++received == count)
            {
                return;
            }
        }
    });
    var publishing = Task.Run(async () =>
    {
        for (long i = 0; i < count; i++)
        {
            await pub.PublishAsync("bench.ws", payload);
            published++;
        }

        await pub.PingAsync();
    });
    long lastReceived = -1, lastPublished = -1;
    var still = 0;
    while (!(receiving.IsCompleted && publishing.IsCompleted))
    {
        await Task.Delay(1000);
        still = received == lastReceived && published == lastPublished ? still + 1 : 0;
        if (still == 3)
        {
            Console.WriteLine($"round {round}: STALL received {received:N0} published {published:N0} of {count:N0}");
            Console.WriteLine(await http.GetStringAsync($"{monitor}/connz?subs=1"));
            using var ss = Process.Start(new ProcessStartInfo("ss", $"-tnoi state established ( sport = :{port} or dport = :{port} )") { RedirectStandardOutput = true })!;
            Console.WriteLine(ss.StandardOutput.ReadToEnd());
            return 2;
        }

        lastReceived = received;
        lastPublished = published;
    }

    Console.WriteLine($"round {round}: {count:N0} in {watch.Elapsed.TotalSeconds:F1} s");
}

return 0;
