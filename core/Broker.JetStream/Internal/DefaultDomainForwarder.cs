using Broker.Abstractions;
using Broker.JetStream.Internal.Api;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Broker.JetStream.Internal;

/// <summary>
/// nats-server's <c>default_js_domain</c> on a server without JetStream: the account's <c>$JS.API.&gt;</c> requests go
/// to <c>$JS.&lt;domain&gt;.API.&gt;</c>, where the JetStream of that domain answers (through a leaf node); with nobody
/// there, the requester gets "no responders" as from nats-server.
/// </summary>
internal sealed class DefaultDomainForwarder(IReadOnlyDictionary<string, string> domains, IMessageBus bus, ISubjectInterest? interest, ILoggerFactory loggerFactory)
    : IHostedService, IDisposable
{
    private readonly ILogger logger = loggerFactory.CreateLogger("Broker.JetStream");
    private IBusClient? client;
    private SubjectForwarder? forwarder;

    public Task StartAsync(CancellationToken cancellationToken)
    {
        JetStreamLog.DefaultDomainDeprecated(logger);
        if (domains.TryGetValue(BrokerAccount.GlobalName, out var domain) && domain.Length > 0)
        {
            var target = "$JS." + domain + ".API.";
            JetStreamLog.DefaultDomainMapping(logger, ApiSubjects.All, target + ">", BrokerAccount.GlobalName);
            client = bus.CreateClient(new BusClientOptions { Name = "JetStream default domain" });
            forwarder = new SubjectForwarder(ApiSubjects.Prefix, target, client, interest);
        }

        return Task.CompletedTask;
    }

    public async Task StopAsync(CancellationToken cancellationToken)
    {
        forwarder?.Dispose();
        forwarder = null;
        if (client is not null)
        {
            await client.DisposeAsync().ConfigureAwait(false);
            client = null;
        }
    }

    public void Dispose()
    {
        forwarder?.Dispose();
        forwarder = null;
    }
}
