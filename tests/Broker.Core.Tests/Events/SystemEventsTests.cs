using Broker.Core.Internal;
using Broker.Core.Internal.Events;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Core.Tests.Events;

public sealed class SystemEventsTests
{
    [Fact]
    public void A_full_queue_drops_and_counts_instead_of_growing_or_waiting()
    {
        var core = new BrokerCore(new BrokerOptions(), NullLoggerFactory.Instance);

        // No loop runs: nothing is published, so the queue only fills.
        var events = new SystemEvents(core, publisher: null!, endpoints: null!);
        for (var i = 0; i < SystemEvents.QueueCapacity; i++)
        {
            events.Enqueue(new ShutdownEvent(core.ServerId));
        }

        Assert.Equal(0, events.Dropped);
        events.Enqueue(new ShutdownEvent(core.ServerId));
        events.Enqueue(new ShutdownEvent(core.ServerId));
        Assert.Equal(2, events.Dropped);
    }

    [Fact]
    public void The_system_account_is_the_default_one_unless_configured_or_refused()
    {
        Assert.Equal("$SYS", Internal.Accounts.AccountRegistry.SystemAccountName(new BrokerOptions()));
        Assert.Null(Internal.Accounts.AccountRegistry.SystemAccountName(new BrokerOptions { NoSystemAccount = true }));
        Assert.Equal("S", Internal.Accounts.AccountRegistry.SystemAccountName(new BrokerOptions { SystemAccount = "S", NoSystemAccount = true }));
        var configured = new BrokerOptions { NoSystemAccount = true, Accounts = [new Broker.Core.Auth.AccountOptions { Name = "$SYS" }] };
        Assert.Equal("$SYS", Internal.Accounts.AccountRegistry.SystemAccountName(configured));

        var core = new BrokerCore(new BrokerOptions(), NullLoggerFactory.Instance);
        Assert.True(core.Accounts.System!.IsSystem);
        Assert.False(core.Accounts.Global.IsSystem);
        Assert.Equal(["$G", "$SYS"], core.Accounts.All.Select(a => a.Name).Order(StringComparer.Ordinal));

        var error = Assert.Throws<InvalidOperationException>(() => new BrokerOptions { SystemAccount = "NOPE" }.Validate());
        Assert.Equal("error resolving system account: account missing", error.Message);
    }
}
