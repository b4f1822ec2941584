using Broker.Core.Auth;
using Xunit;

namespace Broker.Core.Tests.Leaf;

/// <summary>The hub's option checks with nats-server's texts (<c>validateLeafNodeAuthOptions</c>, <c>validateLeafNode</c>).</summary>
public sealed class LeafHubOptionsTests
{
    [Fact]
    public void A_single_user_and_users_together_are_refused()
    {
        var options = new BrokerOptions();
        options.LeafNodes.Hub = new LeafHubOptions { Port = 7422, User = "a", Users = [new LeafUserOptions { User = "b" }] };
        Assert.Equal("can not have a single user/pass and a users array", Assert.Throws<InvalidOperationException>(options.Validate).Message);
    }

    [Fact]
    public void In_operator_mode_users_and_a_named_account_are_refused()
    {
        var options = new BrokerOptions();
        options.Operator.TrustedKeys = ["OABC"];
        options.LeafNodes.Hub = new LeafHubOptions { Port = 7422, Users = [new LeafUserOptions { User = "b" }] };
        Assert.Equal("operator mode does not allow specifying user in leafnode config", Assert.Throws<InvalidOperationException>(() => options.LeafNodes.Validate(options)).Message);

        options.LeafNodes.Hub = new LeafHubOptions { Port = 7422, Account = "EDGE" };
        Assert.Equal("operator mode and non account nkeys are incompatible", Assert.Throws<InvalidOperationException>(() => options.LeafNodes.Validate(options)).Message);
    }

    [Fact]
    public void A_leaf_users_account_must_exist()
    {
        var options = new BrokerOptions { Accounts = [new AccountOptions { Name = "A" }] };
        options.LeafNodes.Hub = new LeafHubOptions { Port = 7422, Users = [new LeafUserOptions { User = "a", Account = "A" }, new LeafUserOptions { User = "b", Account = "B" }] };
        Assert.Equal("cannot find local account \"B\" specified in leafnode authorization", Assert.Throws<InvalidOperationException>(() => options.LeafNodes.Validate(options)).Message);
    }
}
