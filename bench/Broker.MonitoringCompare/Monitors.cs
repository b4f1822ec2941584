using System.Net;
using System.Runtime.CompilerServices;
using Broker.Core;
using Broker.Core.Internal.Monitoring;
using MonitorRequest = Broker.Core.Internal.Monitoring.Http.HttpRequest;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;

namespace Broker.MonitoringCompare;

/// <summary>A running broker and where its monitor answers (none for the baseline without monitoring).</summary>
internal interface IMonitorServer : IAsyncDisposable
{
    IPEndPoint? EndPoint { get; }
}

/// <summary>The broker as shipped: its own HTTP/1.1 server on the monitor port (or no monitoring at all).</summary>
internal sealed class OwnMonitor(BrokerServer broker, IPEndPoint? endPoint) : IMonitorServer
{
    public IPEndPoint? EndPoint { get; } = endPoint;

    public BrokerServer Broker { get; } = broker;

    public static async Task<OwnMonitor> StartAsync(bool monitoring = true)
    {
        var options = new BrokerOptions { Host = "127.0.0.1", Port = 0 };
        if (monitoring)
        {
            options.Monitoring.Host = "127.0.0.1";
            options.Monitoring.Port = 0;
        }

        var broker = new BrokerServer(options);
        await broker.StartAsync().ConfigureAwait(false);
        return new OwnMonitor(broker, monitoring ? (IPEndPoint)broker.GetEndPoint(BrokerServer.MonitorListenerName) : null);
    }

    public ValueTask DisposeAsync() => Broker.DisposeAsync();
}

/// <summary>
/// What a move to Kestrel would look like: the broker's endpoint code (<see cref="MonitorRouter"/>: routing, request
/// statistics, the endpoints' JSON) behind a Kestrel terminal middleware in place of the broker's HTTP connection,
/// parser and response writer. The broker is started with its monitor on (the router is made with it), so its own
/// monitor listener is also bound, unused; that costs the Kestrel side one extra listening socket at start-up.
/// </summary>
internal sealed class KestrelMonitor(OwnMonitor broker, WebApplication app, IPEndPoint endPoint) : IMonitorServer
{
    public IPEndPoint? EndPoint { get; } = endPoint;

    public static async Task<KestrelMonitor> StartAsync()
    {
        var broker = await OwnMonitor.StartAsync().ConfigureAwait(false);
        var router = Router(broker.Broker) ?? throw new InvalidOperationException("the broker made no monitor router");

        // The smallest Kestrel host: no configuration files, no logging providers, no routing, no server header.
        var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions());
        builder.WebHost.UseKestrelCore().ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            kestrel.Listen(IPAddress.Loopback, 0);
        });
        var app = builder.Build();
        app.Run(context => ServeAsync(context, router));
        await app.StartAsync().ConfigureAwait(false);
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new KestrelMonitor(broker, app, new IPEndPoint(IPAddress.Loopback, new Uri(address).Port));
    }

    public async ValueTask DisposeAsync()
    {
        await app.DisposeAsync().ConfigureAwait(false);
        await broker.DisposeAsync().ConfigureAwait(false);
    }

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "monitorRouter")]
    private static extern ref MonitorRouter? Router(BrokerServer server);

    private static Task ServeAsync(HttpContext context, MonitorRouter router)
    {
        var request = context.Request;
        var answer = router.Handle(new MonitorRequest
        {
            Method = request.Method,
            Path = request.Path.Value ?? "/",
            RawQuery = request.QueryString.HasValue ? request.QueryString.Value![1..] : string.Empty,
            KeepAlive = true,
        });
        var response = context.Response;
        response.StatusCode = answer.StatusCode;
        response.ContentType = answer.ContentType;
        response.ContentLength = answer.Body.Length;
        foreach (var (name, value) in answer.Headers)
        {
            response.Headers[name] = value;
        }

        return HttpMethods.IsHead(request.Method) ? Task.CompletedTask : response.Body.WriteAsync(answer.Body).AsTask();
    }
}
