using Broker.Core.Internal.Reload;

namespace Broker.Core.Tests.Api;

public sealed class ReloadTableTests
{
    [Fact]
    public void Every_option_says_how_it_reloads()
    {
        var covered = OptionsComparer.Settings.Select(s => s.Property).ToHashSet();
        var missing = typeof(BrokerOptions).GetProperties().Select(p => p.Name).Where(name => !covered.Contains(name)).ToList();
        Assert.True(missing.Count == 0, "BrokerOptions properties without a reload rule in OptionsComparer: " + string.Join(", ", missing));
    }

    [Fact]
    public void Changed_lists_exactly_the_settings_that_differ()
    {
        var a = new BrokerOptions();
        var b = a.Clone();
        Assert.Empty(OptionsComparer.Changed(a, b));
        b.MaxPayload = 5;
        b.Authorization.Users.Add(new() { User = "x" });
        Assert.Equal(["max_payload", "authorization"], OptionsComparer.Changed(a, b).Select(s => s.Key));
    }
}
