"""Checkout settings, from the environment (pydantic-settings)."""

from pydantic_settings import BaseSettings


class Settings(BaseSettings):
    payment_service_url: str = "http://payment:8080"
    cart_service_url: str = "http://cart:8080"
    inventory_service_url: str = "http://inventory:8080"
    shipping_service_url: str = "http://shipping:8080"
    orders_db_url: str = "postgresql://checkout@orders-db:5432/orders"
    nats_url: str = "nats://nats:4222"
    payment_timeout_s: float = 10.0


settings = Settings()
