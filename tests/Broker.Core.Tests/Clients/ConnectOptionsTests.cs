using System.Text;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Clients;

/// <summary>What a CONNECT asks for: nats-server's defaults, fields left out keeping their values, and the refusals after authentication.</summary>
public sealed class ConnectOptionsTests
{
    [Fact]
    public void Before_connect_verbose_pedantic_and_echo_are_on()
    {
        var options = new ConnectOptions();

        Assert.True(options.Verbose);
        Assert.True(options.Pedantic);
        Assert.True(options.Echo);
        Assert.False(options.Headers);
        Assert.False(options.NoResponders);
        Assert.Equal(0, options.Protocol);
        Assert.Equal(CloseReason.None, options.Refusal());
    }

    [Fact]
    public void A_second_connect_changes_only_what_it_names()
    {
        var options = new ConnectOptions();
        options.Apply(Connect("""{"verbose":false,"pedantic":false,"echo":false,"headers":true,"no_responders":true,"protocol":1,"name":"n","lang":"go","version":"1.2"}"""), headersAllowed: true);
        options.Apply(Connect("""{"verbose":true}"""), headersAllowed: true);

        Assert.True(options.Verbose);
        Assert.False(options.Pedantic);
        Assert.False(options.Echo);
        Assert.True(options.Headers);
        Assert.True(options.NoResponders);
        Assert.Equal(1, options.Protocol);
        Assert.Equal(("n", "go", "1.2"), (options.Name, options.Lang, options.Version));
        Assert.Equal(CloseReason.None, options.Refusal());
    }

    [Fact]
    public void Headers_are_off_when_the_server_does_not_support_them_and_no_responders_then_refused()
    {
        var options = new ConnectOptions();
        options.Apply(Connect("""{"headers":true,"no_responders":true}"""), headersAllowed: false);

        Assert.False(options.Headers);
        Assert.Equal(CloseReason.NoRespondersRequiresHeaders, options.Refusal());
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(2)]
    public void An_unknown_protocol_is_refused(int protocol)
    {
        var options = new ConnectOptions();
        options.Apply(Connect($$"""{"protocol":{{protocol}}}"""), headersAllowed: true);

        Assert.Equal(CloseReason.BadClientProtocol, options.Refusal());
    }

    private static ConnectMessage Connect(string json) => ConnectMessage.TryParse(Encoding.UTF8.GetBytes(json)) ?? throw new InvalidOperationException(json);
}
